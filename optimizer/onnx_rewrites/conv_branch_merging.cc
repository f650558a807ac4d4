#include "optimizer/onnx_rewrites/conv_branch_merging.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// One side of the Add: a convolution of X, or X * a + s per channel (a BatchNormalization,
// or X itself with `a` empty: ones).
struct Branch {
  std::string x;
  int node = -1;  // the producer merged away (-1: X itself)
  const Node* conv = nullptr;
  const Tensor* w = nullptr;  // [M, C / group, kh, kw]
  const Tensor* b = nullptr;
  std::vector<double> a, s;   // per channel, without a conv
  int64_t group = 1;
  std::vector<int64_t> strides, pads;  // pads: h begin, w begin, h end, w end
};

bool FloatConstantOfSize(const Tensor* t, int64_t n) {
  return t && t->dtype() == DataType::kFloat && t->numel() == n && t->rank() == 1;
}

std::optional<Branch> ConvBranch(const Graph& graph, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || !n.has_input(0) || n.outputs.size() != 1) return std::nullopt;
  const Tensor* w = Constant(graph, n.inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() != 4) return std::nullopt;
  const Tensor* b = n.has_input(2) ? Constant(graph, n.inputs[2]) : nullptr;
  if (n.has_input(2) && !FloatConstantOfSize(b, w->dim(0))) return std::nullopt;
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return std::nullopt;
  for (int64_t d : n.attr_ints("dilations", {1, 1}))
    if (d != 1) return std::nullopt;
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != std::vector<int64_t>{w->dim(2), w->dim(3)})
    return std::nullopt;
  Branch br;
  br.x = n.inputs[0];
  br.conv = &n;
  br.w = w;
  br.b = b;
  br.group = n.attr_int("group", 1);
  br.strides = n.attr_ints("strides", {1, 1});
  br.pads = auto_pad == "VALID" ? std::vector<int64_t>{0, 0, 0, 0} : n.attr_ints("pads", {0, 0, 0, 0});
  if (br.group <= 0 || br.strides.size() != 2 || br.pads.size() != 4 || w->dim(0) % br.group) return std::nullopt;
  return br;
}

std::optional<Branch> BatchNormBranch(const Graph& graph, const Node& n) {
  std::optional<rewrite::ChannelAffine> affine = rewrite::InferenceBatchNorm(graph, n);
  if (!affine) return std::nullopt;
  Branch br;
  br.x = n.inputs[0];
  br.a = std::move(affine->a);
  br.s = std::move(affine->s);
  return br;
}

// What value `v` (read by the Add at `adder`) is, as a branch.
Branch Describe(const Graph& graph, const std::string& v, int adder, const ValueReaders& readers,
                const std::map<std::string, size_t>& producers) {
  auto p = producers.find(v);
  if (p != producers.end() && readers.Sole(v) == adder) {
    const Node& n = graph.nodes[p->second];
    std::optional<Branch> br = IsOnnx(n, "Conv")                 ? ConvBranch(graph, n)
                               : IsOnnx(n, "BatchNormalization") ? BatchNormBranch(graph, n)
                                                                 : std::nullopt;
    if (br) {
      br->node = static_cast<int>(p->second);
      return *br;
    }
  }
  Branch self;
  self.x = v;
  return self;
}

// The merged convolution's kernel, pads and each branch's offset into the kernel, or
// nullopt when the two kernels do not nest centered.
struct Geometry {
  int64_t kh, kw;
  std::vector<int64_t> pads;
  int64_t offset[2][2];  // [branch][dim]
};

std::optional<Geometry> MergedGeometry(const Branch& p, const Branch& q) {
  Geometry g;
  g.kh = std::max(p.w->dim(2), q.w->dim(2));
  g.kw = std::max(p.w->dim(3), q.w->dim(3));
  g.pads.assign(4, 0);
  const Branch* br[2] = {&p, &q};
  for (int d = 0; d < 2; ++d) {
    const int64_t k = d == 0 ? g.kh : g.kw;
    const Branch& wide = br[0]->w->dim(2 + d) == k ? *br[0] : *br[1];
    g.pads[d] = wide.pads[d];
    g.pads[2 + d] = wide.pads[2 + d];
    for (int i = 0; i < 2; ++i) {
      const int64_t grow = k - br[i]->w->dim(2 + d);
      if (grow % 2 || br[i]->pads[d] + grow / 2 != g.pads[d] || br[i]->pads[2 + d] + grow / 2 != g.pads[2 + d])
        return std::nullopt;
      g.offset[i][d] = grow / 2;
    }
  }
  return g;
}

// Adds sign * the conv branch's weights into W ([M, Cg, kh, kw], float64) at the offsets.
void AddKernel(std::vector<double>& w, int64_t kh, int64_t kw, const Tensor& src, int64_t oy, int64_t ox,
               double sign) {
  const int64_t m = src.dim(0), cg = src.dim(1), sh = src.dim(2), sw = src.dim(3);
  const float* p = src.data<float>();
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < cg; ++i)
      for (int64_t y = 0; y < sh; ++y)
        for (int64_t x = 0; x < sw; ++x)
          w[((o * cg + i) * kh + y + oy) * kw + x + ox] += sign * p[((o * cg + i) * sh + y) * sw + x];
}

// Merges the Add or Sub at `k` when its two branches merge; returns whether it did.
bool MergeAt(Graph& graph, size_t k, const ValueReaders& readers, const std::map<std::string, size_t>& producers) {
  const Node& adder = graph.nodes[k];
  const bool sub = IsOnnx(adder, "Sub");
  if (!(sub || IsOnnx(adder, "Add")) || adder.inputs.size() != 2 || adder.outputs.size() != 1 ||
      adder.inputs[0] == adder.inputs[1] || graph.ValueType(adder.outputs[0]) != DataType::kFloat)
    return false;
  const Branch p = Describe(graph, adder.inputs[0], static_cast<int>(k), readers, producers);
  const Branch q = Describe(graph, adder.inputs[1], static_cast<int>(k), readers, producers);
  if (p.x != q.x || (!p.conv && !q.conv)) return false;
  const Branch& conv = p.conv ? p : q;
  const int64_t m = conv.w->dim(0), cg = conv.w->dim(1), channels_in = cg * conv.group;
  int64_t kh = conv.w->dim(2), kw = conv.w->dim(3);
  std::vector<int64_t> pads = conv.pads;
  const double signs[2] = {1.0, sub ? -1.0 : 1.0};
  std::optional<Geometry> geo;
  if (p.conv && q.conv) {
    if (p.group != q.group || p.strides != q.strides || q.w->dim(0) != m || q.w->dim(1) != cg) return false;
    geo = MergedGeometry(p, q);
    if (!geo) return false;
    kh = geo->kh;
    kw = geo->kw;
    pads = geo->pads;
  } else {
    const Branch& other = p.conv ? q : p;
    if (m != channels_in || conv.strides != std::vector<int64_t>{1, 1} || kh % 2 == 0 || kw % 2 == 0 ||
        conv.pads != std::vector<int64_t>{kh / 2, kw / 2, kh / 2, kw / 2} ||
        (!other.a.empty() && static_cast<int64_t>(other.a.size()) != m))
      return false;
  }
  std::vector<double> w(static_cast<size_t>(m * cg * kh * kw), 0.0), b(static_cast<size_t>(m), 0.0);
  const Branch* branches[2] = {&p, &q};
  for (int i = 0; i < 2; ++i) {
    const Branch& br = *branches[i];
    if (br.conv) {
      AddKernel(w, kh, kw, *br.w, geo ? geo->offset[i][0] : 0, geo ? geo->offset[i][1] : 0, signs[i]);
      if (br.b)
        for (int64_t o = 0; o < m; ++o) b[o] += signs[i] * br.b->data<float>()[o];
    } else {
      for (int64_t o = 0; o < m; ++o) {
        w[((o * cg + o % cg) * kh + kh / 2) * kw + kw / 2] += signs[i] * (br.a.empty() ? 1.0 : br.a[o]);
        if (!br.s.empty()) b[o] += signs[i] * br.s[o];
      }
    }
  }
  Node merged = *conv.conv;
  merged.name = adder.name.empty() ? merged.name + "+merged" : adder.name;
  const std::string base = conv.conv->name.empty() ? adder.outputs[0] : conv.conv->name;
  Tensor new_w = Tensor::Host(DataType::kFloat, {m, cg, kh, kw});
  std::transform(w.begin(), w.end(), new_w.data<float>(), [](double v) { return static_cast<float>(v); });
  Tensor new_b = Tensor::Host(DataType::kFloat, {m});
  std::transform(b.begin(), b.end(), new_b.data<float>(), [](double v) { return static_cast<float>(v); });
  const std::string w_name = rewrite::FreshName(graph, base + ".merged_weight");
  graph.initializers[w_name] = std::move(new_w);
  const std::string b_name = rewrite::FreshName(graph, base + ".merged_bias");
  graph.initializers[b_name] = std::move(new_b);
  merged.inputs = {p.x, w_name, b_name};
  merged.outputs = adder.outputs;
  merged.attributes.erase("auto_pad");
  merged.attributes["pads"] = IntsAttribute(pads);
  if (merged.has_attr("kernel_shape")) merged.attributes["kernel_shape"] = IntsAttribute({kh, kw});
  std::set<size_t> removed;
  for (const Branch* br : branches)
    if (br->node >= 0) removed.insert(static_cast<size_t>(br->node));
  graph.nodes[k] = std::move(merged);  // after both branches and X in node order
  rewrite::RemoveNodes(graph, removed);
  return true;
}

}  // namespace

int MergeConvBranches(Graph& graph) {
  int merged = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const ValueReaders readers(graph);
    const auto producers = Producers(graph);
    for (size_t k = 0; k < graph.nodes.size() && !changed; ++k) changed = MergeAt(graph, k, readers, producers);
    merged += changed;
  }
  return merged;
}

}  // namespace tandem
