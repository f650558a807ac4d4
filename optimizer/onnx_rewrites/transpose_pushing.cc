#include "optimizer/onnx_rewrites/transpose_pushing.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;
using Perm = std::vector<int64_t>;

Perm Inverse(const Perm& p) {
  Perm q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[p[i]] = static_cast<int64_t>(i);
  return q;
}

enum class Kind { kNone, kUnary, kBroadcast, kReduce, kArg, kPad, kConcat, kSplit, kSlice, kSoftmax };

Kind KindOf(const Node& n, int opset) {
  static const std::set<std::string> kUnary = {
      "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Celu", "Softplus", "Softsign", "Abs",
      "Neg", "Exp", "Log", "Erf", "Sqrt", "Reciprocal", "Cast", "Floor", "Ceil", "Round", "Sign",
      "HardSigmoid", "HardSwish", "Mish", "Gelu", "Sin", "Cos", "Tan", "Atan", "Not", "Identity",
      "IsNaN", "IsInf", "ThresholdedRelu", "Shrink", "Clip", "BitwiseNot"};
  static const std::set<std::string> kBroadcast = {
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu", "Mod", "Equal",
      "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Where",
      "BitwiseAnd", "BitwiseOr", "BitwiseXor"};
  if (!n.domain.empty() || n.outputs.empty()) return Kind::kNone;
  const std::string& op = n.op_type;
  if (kUnary.count(op)) return Kind::kUnary;
  if (kBroadcast.count(op)) return Kind::kBroadcast;
  if (op.rfind("Reduce", 0) == 0) return Kind::kReduce;
  if (op == "ArgMax" || op == "ArgMin") return Kind::kArg;
  if (op == "Pad" && opset >= 2) return Kind::kPad;
  if (op == "Concat") return Kind::kConcat;
  if (op == "Split") return Kind::kSplit;
  if (op == "Slice") return Kind::kSlice;
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && opset >= 13) return Kind::kSoftmax;
  return Kind::kNone;
}

// The inputs that carry the layout: every one for broadcasting ops and Concat, else the data.
std::vector<size_t> LayoutInputs(const Node& n, Kind kind) {
  if (kind != Kind::kBroadcast && kind != Kind::kConcat) return {0};
  std::vector<size_t> all;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.has_input(i)) all.push_back(i);
  return all;
}

// `c` with leading ones up to q's rank, then transposed by q.
Tensor PermutedConstant(const Tensor& c, const Perm& q) {
  const int rank = static_cast<int>(q.size());
  Dims extended(rank, 1), dims(rank), strides(rank, 1);
  for (int i = 0; i < c.rank(); ++i) extended[rank - c.rank() + i] = c.dim(i);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * extended[d + 1];
  for (int j = 0; j < rank; ++j) dims[j] = extended[q[j]];
  Tensor out = Tensor::Host(c.dtype(), dims);
  const size_t size = SizeOf(c.dtype());
  const char* src = static_cast<const char*>(c.raw());
  char* dst = static_cast<char*>(out.raw());
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    int64_t offset = 0;
    for (int j = 0; j < rank; ++j) offset += index[j] * strides[q[j]];
    std::memcpy(dst + e * size, src + offset * size, size);
    for (int j = rank - 1; j >= 0 && ++index[j] == dims[j]; --j) index[j] = 0;
  }
  return out;
}

// The type of Transpose(value, q): same element type, dims[j] = value's dims[q[j]].
ValueInfo TransposedInfo(const Graph& graph, const std::string& value, const Perm& q, const std::string& name) {
  ValueInfo info;
  if (const ValueInfo* v = graph.FindValueInfo(value)) info = *v;
  info.name = name;
  if (info.shape.rank_known && info.shape.dims.size() == q.size()) {
    Shape s = info.shape;
    for (size_t j = 0; j < q.size(); ++j) s.dims[j] = info.shape.dims[q[j]];
    info.shape = s;
  } else {
    info.shape = Shape::Unknown();
  }
  return info;
}

// How a node runs in its input's layout: the attributes and constant inputs it gets, and
// the permutation each output needs to come back (empty: none).
struct Rewrite {
  std::map<std::string, Attribute> attributes;
  std::map<size_t, std::vector<int64_t>> int_inputs;  // input slot -> new int64 constant
  std::vector<Perm> output_perms;
};

std::optional<int64_t> Axis(int64_t a, int64_t rank) {
  if (a < -rank || a >= rank) return std::nullopt;
  return a < 0 ? a + rank : a;
}

// A reduction over `axes` (of the transposed layout) with keepdims 0: the order of the kept
// axes, p restricted to them and renumbered.
Perm KeptOrder(const Perm& p, const std::set<int64_t>& reduced) {
  Perm kept_x;
  for (size_t i = 0; i < p.size(); ++i)
    if (!reduced.count(static_cast<int64_t>(i))) kept_x.push_back(p[i]);
  Perm sorted = kept_x;
  std::sort(sorted.begin(), sorted.end());
  Perm order;
  for (int64_t a : kept_x) order.push_back(std::lower_bound(sorted.begin(), sorted.end(), a) - sorted.begin());
  return order;
}

// Axes, pads and output permutations for node `n` moved above Transpose(p); nullopt when
// the node cannot move (axes not constant, an axes input on Pad, ...).
std::optional<Rewrite> Plan(const Graph& graph, const Node& n, Kind kind, const Perm& p) {
  const int opset = graph.opset("");
  const int64_t rank = static_cast<int64_t>(p.size());
  Rewrite r{n.attributes, {}, std::vector<Perm>(n.outputs.size(), p)};
  auto remap_axis_attr = [&](const char* key, int64_t fallback) {
    auto a = Axis(n.attr_int(key, fallback), rank);
    if (a) r.attributes[key] = IntAttribute(p[*a]);
    return a;
  };
  switch (kind) {
    case Kind::kUnary:
    case Kind::kBroadcast:
      return r;
    case Kind::kConcat:
      if (!n.has_attr("axis") || !remap_axis_attr("axis", 0)) return std::nullopt;
      return r;
    case Kind::kSplit:
      if (!remap_axis_attr("axis", 0)) return std::nullopt;
      return r;
    case Kind::kSoftmax:
      if (!remap_axis_attr("axis", -1)) return std::nullopt;
      return r;
    case Kind::kArg: {
      auto a = remap_axis_attr("axis", 0);
      if (!a) return std::nullopt;
      if (n.attr_int("keepdims", 1) == 0) r.output_perms[0] = KeptOrder(p, {*a});
      return r;
    }
    case Kind::kReduce: {
      const bool axes_input = opset >= 18 || (n.op_type == "ReduceSum" && opset >= 13);
      std::optional<std::vector<int64_t>> axes;
      if (axes_input) {
        if (n.has_input(1)) axes = rewrite::IntConstant(graph, n.inputs[1], rank);
      } else if (n.has_attr("axes")) {
        axes = n.attr_ints("axes");
      }
      if (!axes || axes->empty()) return std::nullopt;  // every axis (or none): left alone
      std::set<int64_t> reduced;
      std::vector<int64_t> mapped;
      for (int64_t a : *axes) {
        auto na = Axis(a, rank);
        if (!na) return std::nullopt;
        reduced.insert(*na);
        mapped.push_back(p[*na]);
      }
      std::sort(mapped.begin(), mapped.end());
      if (axes_input) {
        r.int_inputs[1] = mapped;
      } else {
        r.attributes["axes"] = IntsAttribute(mapped);
      }
      if (n.attr_int("keepdims", 1) == 0) r.output_perms[0] = KeptOrder(p, reduced);
      return r;
    }
    case Kind::kPad: {
      if (n.has_input(3)) return std::nullopt;
      auto pads = rewrite::PadAmounts(graph, n);
      if (!pads || static_cast<int64_t>(pads->size()) != 2 * rank) return std::nullopt;
      std::vector<int64_t> mapped(2 * rank);
      for (int64_t i = 0; i < rank; ++i) {
        mapped[p[i]] = (*pads)[i];
        mapped[rank + p[i]] = (*pads)[rank + i];
      }
      if (opset >= 11) {
        r.int_inputs[1] = mapped;
      } else {
        r.attributes["pads"] = IntsAttribute(mapped);
      }
      return r;
    }
    case Kind::kSlice: {
      const bool inputs = opset >= 10;
      std::optional<std::vector<int64_t>> axes;
      if (inputs) {
        if (n.has_input(3)) {
          axes = rewrite::IntConstant(graph, n.inputs[3], rank);
        } else if (auto starts = n.has_input(1) ? rewrite::IntConstant(graph, n.inputs[1], rank) : std::nullopt) {
          axes = std::vector<int64_t>(starts->size());
          for (size_t i = 0; i < axes->size(); ++i) (*axes)[i] = static_cast<int64_t>(i);
        }
      } else {
        axes = n.attr_ints("axes");
        if (axes->empty())
          for (size_t i = 0; i < n.attr_ints("starts").size(); ++i) axes->push_back(static_cast<int64_t>(i));
      }
      if (!axes || axes->empty()) return std::nullopt;
      for (int64_t& a : *axes) {
        auto na = Axis(a, rank);
        if (!na) return std::nullopt;
        a = p[*na];
      }
      if (inputs) {
        r.int_inputs[3] = *axes;
      } else {
        r.attributes["axes"] = IntsAttribute(*axes);
      }
      return r;
    }
    case Kind::kNone:
      break;
  }
  return std::nullopt;
}

Node TransposeNode(const std::string& name, const std::string& in, const std::string& out, const Perm& perm) {
  Node t;
  t.name = name;
  t.op_type = "Transpose";
  t.inputs = {in};
  t.outputs = {out};
  t.attributes["perm"] = IntsAttribute(perm);
  return t;
}

}  // namespace

int PushTransposesDown(Graph& graph) {
  // The Transposes seen so far (the walk is in node order): output -> (input, perm).
  std::map<std::string, std::pair<std::string, Perm>> transposed;
  std::map<std::pair<std::string, Perm>, std::string> permuted_constants;
  const int opset = graph.opset("");
  int moved = 0;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const Node& n = graph.nodes[k];
    if (IsOnnx(n, "Transpose") && n.has_input(0) && n.has_output(0)) {
      Perm p = rewrite::TransposePerm(graph, n);
      if (!p.empty() && !rewrite::IsIdentityPerm(p)) transposed[n.outputs[0]] = {n.inputs[0], std::move(p)};
      continue;
    }
    const Kind kind = KindOf(n, opset);
    if (kind == Kind::kNone) continue;
    const std::vector<size_t> layout = LayoutInputs(n, kind);
    Perm p;
    for (size_t i : layout)
      if (auto t = transposed.find(n.inputs[i]); t != transposed.end()) {
        p = t->second.second;
        break;
      }
    if (p.empty()) continue;
    const size_t rank = p.size();
    // Each layout input: read through Transpose(p), a constant, or one that needs a Transpose.
    int through = 0, added = 0;
    bool movable = true;
    for (size_t i : layout) {
      const std::string& v = n.inputs[i];
      if (auto t = transposed.find(v); t != transposed.end() && t->second.second == p) {
        ++through;
      } else if (const Tensor* c = Constant(graph, v)) {
        movable &= c->is_tensor() && c->dtype() != DataType::kString && c->rank() <= static_cast<int>(rank) &&
                   (kind != Kind::kConcat || c->rank() == static_cast<int>(rank));
      } else {
        const Shape* s = rewrite::KnownShape(graph, v);
        movable &= s && s->dims.size() == rank;
        ++added;
      }
    }
    if (!movable || through < added) continue;
    std::optional<Rewrite> plan = Plan(graph, n, kind, p);
    if (!plan) continue;

    Node node = n;
    const Perm inverse = Inverse(p);
    std::vector<Node> before, after;
    for (size_t i : layout) {
      const std::string v = node.inputs[i];
      if (auto t = transposed.find(v); t != transposed.end() && t->second.second == p) {
        node.inputs[i] = t->second.first;
      } else if (const Tensor* c = Constant(graph, v)) {
        if (c->numel() == 1) continue;  // a broadcast scalar is the same in every layout
        std::string& name = permuted_constants[{v, p}];
        if (name.empty()) {
          name = rewrite::FreshName(graph, v + ".transposed");
          graph.initializers[name] = PermutedConstant(*c, inverse);
        }
        node.inputs[i] = name;
      } else {
        const std::string name = rewrite::FreshName(graph, v + ".transposed");
        graph.value_info[name] = TransposedInfo(graph, v, inverse, name);
        before.push_back(TransposeNode(node.name + "/input_transpose", v, name, inverse));
        node.inputs[i] = name;
        transposed[name] = {v, inverse};
      }
    }
    for (const auto& [slot, values] : plan->int_inputs) {
      const std::string name = rewrite::FreshName(graph, node.name + ".transposed_axes");
      graph.initializers[name] = Tensor::FromVector<int64_t>(values, {static_cast<int64_t>(values.size())});
      if (node.inputs.size() <= slot) node.inputs.resize(slot + 1);
      node.inputs[slot] = name;
    }
    node.attributes = std::move(plan->attributes);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const Perm& back = plan->output_perms[o];
      if (!node.has_output(o) || rewrite::IsIdentityPerm(back)) continue;
      const std::string original = node.outputs[o];
      const std::string name = rewrite::FreshName(graph, original + ".pushed");
      graph.value_info[name] = TransposedInfo(graph, original, Inverse(back), name);
      after.push_back(TransposeNode(node.name + "/output_transpose", name, original, back));
      node.outputs[o] = name;
      transposed[original] = {name, back};
    }
    graph.nodes[k] = std::move(node);
    graph.nodes.insert(graph.nodes.begin() + k + 1, after.begin(), after.end());
    graph.nodes.insert(graph.nodes.begin() + k, before.begin(), before.end());
    k += before.size() + after.size();
    ++moved;
  }
  return moved;
}

}  // namespace tandem
