#include "optimizer/onnx_rewrites/rewrite_util.h"

#include <algorithm>
#include <cmath>

#include "graph/value_readers.h"

namespace tandem::rewrite {

const Tensor* Constant(const Graph& graph, const std::string& value) {
  auto it = graph.initializers.find(value);
  return it == graph.initializers.end() ? nullptr : &it->second;
}

const Tensor* OneValueScale(const Graph& graph, const std::string& value) {
  const Tensor* t = Constant(graph, value);
  return t && t->dtype() == DataType::kFloat && t->numel() == 1 && t->rank() <= 1 ? t : nullptr;
}

const Tensor* OneValueZeroPoint(const Graph& graph, const std::string& value) {
  const Tensor* t = Constant(graph, value);
  const bool eight_bit = t && (t->dtype() == DataType::kInt8 || t->dtype() == DataType::kUint8);
  return eight_bit && t->numel() == 1 && t->rank() <= 1 ? t : nullptr;
}

std::optional<std::vector<int64_t>> IntConstant(const Graph& graph, const std::string& value,
                                                int64_t max_elements) {
  const Tensor* t = Constant(graph, value);
  if (!t || t->rank() > 1 || t->numel() > max_elements ||
      (t->dtype() != DataType::kInt64 && t->dtype() != DataType::kInt32))
    return std::nullopt;
  std::vector<int64_t> v(t->numel());
  for (int64_t i = 0; i < t->numel(); ++i)
    v[i] = t->dtype() == DataType::kInt64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i];
  return v;
}

bool IsPerChannelConstant(const Tensor* c, int64_t channels, int rank) {
  if (!c || c->dtype() != DataType::kFloat || c->numel() != channels || c->rank() > rank || c->rank() < rank - 1)
    return false;
  const int channel_axis = 1 - (rank - c->rank());  // where dim 1 of the output lands in c
  for (int i = 0; i < c->rank(); ++i)
    if (c->dim(i) != (i == channel_axis ? channels : 1)) return false;
  return true;
}

std::optional<std::vector<int64_t>> PadAmounts(const Graph& graph, const Node& n) {
  if (graph.opset("") < 11) return n.attr_ints(graph.opset("") < 2 ? "paddings" : "pads");
  const Tensor* p = n.has_input(1) ? Constant(graph, n.inputs[1]) : nullptr;
  if (!p || p->dtype() != DataType::kInt64) return std::nullopt;
  return std::vector<int64_t>(p->data<int64_t>(), p->data<int64_t>() + p->numel());
}

std::optional<ChannelAffine> InferenceBatchNorm(const Graph& graph, const Node& bn) {
  if (!IsOnnx(bn, "BatchNormalization") || bn.inputs.size() != 5 || !bn.has_input(0) ||
      bn.attr_int("training_mode", 0) != 0)
    return std::nullopt;
  for (size_t o = 1; o < bn.outputs.size(); ++o)
    if (bn.has_output(o)) return std::nullopt;
  const Tensor* p[4];
  for (int i = 0; i < 4; ++i) {
    p[i] = Constant(graph, bn.inputs[i + 1]);
    if (!p[i] || p[i]->dtype() != DataType::kFloat || p[i]->rank() != 1 || p[i]->numel() != p[0]->numel())
      return std::nullopt;
  }
  const double eps = bn.attr_float("epsilon", 1e-5f);
  ChannelAffine affine;
  for (int64_t c = 0; c < p[0]->numel(); ++c) {
    const double a = p[0]->data<float>()[c] / std::sqrt(static_cast<double>(p[3]->data<float>()[c]) + eps);
    affine.a.push_back(a);
    affine.s.push_back(p[1]->data<float>()[c] - p[2]->data<float>()[c] * a);
  }
  return affine;
}

void SetScaledConvWeights(Graph& graph, Node& conv, const Tensor& w, const std::vector<double>& scale,
                          const std::vector<float>* bias, const std::string& base, const std::string& what) {
  const int64_t channels = w.dim(0), per_channel = w.numel() / std::max<int64_t>(channels, 1);
  Tensor new_w = Tensor::Host(DataType::kFloat, w.dims());
  for (int64_t m = 0; m < channels; ++m) {
    const float* src = w.data<float>() + m * per_channel;
    float* dst = new_w.data<float>() + m * per_channel;
    for (int64_t k = 0; k < per_channel; ++k) dst[k] = static_cast<float>(src[k] * scale[m]);
  }
  const std::string w_name = FreshName(graph, base + "." + what + "_weight");
  graph.initializers[w_name] = std::move(new_w);
  conv.inputs[1] = w_name;
  if (!bias) return;
  Tensor new_b = Tensor::Host(DataType::kFloat, {channels});
  std::copy(bias->begin(), bias->end(), new_b.data<float>());
  const std::string b_name = FreshName(graph, base + "." + what + "_bias");
  graph.initializers[b_name] = std::move(new_b);
  conv.inputs.resize(3);
  conv.inputs[2] = b_name;
}

std::vector<int64_t> TransposePerm(const Graph& graph, const Node& t) {
  if (t.has_attr("perm")) {  // a permutation of 0..rank-1, or unknown (a hostile model's perm)
    std::vector<int64_t> p = t.attr_ints("perm");
    std::vector<bool> seen(p.size(), false);
    for (int64_t a : p) {
      if (a < 0 || a >= static_cast<int64_t>(p.size()) || seen[a]) return {};
      seen[a] = true;
    }
    const Shape* s = t.inputs.empty() ? nullptr : KnownShape(graph, t.inputs[0]);
    if (s && s->dims.size() != p.size()) return {};
    return p;
  }
  const Shape* s = KnownShape(graph, t.inputs[0]);
  if (!s) return {};
  std::vector<int64_t> p(s->dims.size());
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int64_t>(p.size() - 1 - i);
  return p;
}

bool IsIdentityPerm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

const Shape* KnownShape(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  return info && info->kind == ValueKind::kTensor && info->shape.rank_known ? &info->shape : nullptr;
}

namespace {
// Every name defined in `graph` and the subgraphs inside it.
void CollectNames(const Graph& graph, std::set<std::string>& used) {
  for (const ValueInfo& v : graph.inputs) used.insert(v.name);
  for (const auto& [name, t] : graph.initializers) used.insert(name);
  for (const std::string& o : graph.outer_scope_names) used.insert(o);
  for (const Node& n : graph.nodes) {
    for (const std::string& o : n.outputs) used.insert(o);
    for (const auto& [key, a] : n.attributes)
      if (a.kind == Attribute::Kind::kGraph && a.g) CollectNames(*a.g, used);
  }
}
}  // namespace

std::string FreshName(const Graph& graph, const std::string& base) {
  std::set<std::string> used;
  CollectNames(graph, used);
  std::string name = base;
  for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

void RedirectReads(Graph& graph, const std::string& from, const std::string& to) {
  for (Node& n : graph.nodes)
    for (std::string& in : n.inputs)
      if (in == from) in = to;
}

int FoldIntoProducers(Graph& graph, const std::function<std::vector<int>(const Node&)>& slots,
                      const std::function<bool(Graph&, Node& producer, const Node& n, int slot)>& absorb) {
  const ValueReaders readers(graph);
  const auto producers = Producers(graph);
  std::set<size_t> removed;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const Node& n = graph.nodes[k];
    if (!n.has_output(0)) continue;
    for (int slot : slots(n)) {
      if (!n.has_input(slot)) continue;
      const std::string& x = n.inputs[slot];
      auto p = producers.find(x);
      if (p == producers.end() || readers.Sole(x) != static_cast<int>(k) || removed.count(p->second)) continue;
      Node& producer = graph.nodes[p->second];
      if (producer.outputs.size() != 1 || !absorb(graph, producer, n, slot)) continue;
      producer.outputs[0] = n.outputs[0];
      removed.insert(k);
      break;
    }
  }
  RemoveNodes(graph, removed);
  return static_cast<int>(removed.size());
}

}  // namespace tandem::rewrite
