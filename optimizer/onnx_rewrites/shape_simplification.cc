#include "optimizer/onnx_rewrites/shape_simplification.h"

#include <optional>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// One element of a shape vector: a number, or dim `axis` of value `source`.
struct Element {
  std::optional<int64_t> value;
  std::string source, symbol;  // symbol: the dim's symbolic name, when it has one
  int64_t axis = 0;
  bool SameDim(const Element& o) const {
    if (value || o.value) return value == o.value;
    return (source == o.source && axis == o.axis) || (!symbol.empty() && symbol == o.symbol);
  }
};

// A small integer vector (or scalar) computed from shapes.
struct SymbolicVector {
  std::vector<Element> elements;
  bool scalar = false;
  DataType dtype = DataType::kInt64;
  bool known() const {
    for (const Element& e : elements)
      if (!e.value) return false;
    return true;
  }
};

constexpr int64_t kMaxElements = 64;

// The values of a small int32/int64 initializer.
std::optional<std::vector<int64_t>> IntConstant(const Graph& graph, const std::string& name) {
  return rewrite::IntConstant(graph, name, kMaxElements);
}

class Evaluator {
 public:
  explicit Evaluator(const Graph& graph) : graph_(graph) {}

  // Evaluates `n` when its inputs are known vectors; returns whether it produced one.
  bool Evaluate(const Node& n) {
    if (!n.domain.empty() || n.outputs.size() != 1 || !n.has_output(0)) return false;
    std::optional<SymbolicVector> out;
    if (n.op_type == "Shape") out = OfShape(n);
    else if (n.op_type == "Gather") out = OfGather(n);
    else if (n.op_type == "Slice") out = OfSlice(n);
    else if (n.op_type == "Concat") out = OfConcat(n);
    else if (n.op_type == "Cast") out = OfCast(n);
    else if (n.op_type == "Unsqueeze" || n.op_type == "Squeeze") out = OfSqueeze(n);
    else if (n.op_type == "Identity") out = Input(n, 0);
    if (!out) return false;
    values_[n.outputs[0]] = *out;
    return true;
  }

  const SymbolicVector* Find(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }

  // A value as a vector: one computed earlier, or an integer initializer.
  std::optional<SymbolicVector> Input(const Node& n, size_t i) const {
    if (!n.has_input(i)) return std::nullopt;
    if (const SymbolicVector* v = Find(n.inputs[i])) return *v;
    const Tensor* t = Constant(graph_, n.inputs[i]);
    auto ints = IntConstant(graph_, n.inputs[i]);
    if (!ints) return std::nullopt;
    SymbolicVector v;
    v.scalar = t->rank() == 0;
    v.dtype = t->dtype();
    for (int64_t x : *ints) {
      Element e;
      e.value = x;
      v.elements.push_back(e);
    }
    return v;
  }

 private:
  std::optional<SymbolicVector> OfShape(const Node& n) const {
    const Shape* s = rewrite::KnownShape(graph_, n.inputs[0]);
    if (!s) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(s->dims.size());
    auto clamp = [rank](int64_t i) { return std::min(std::max(i < 0 ? i + rank : i, int64_t{0}), rank); };
    const int64_t start = clamp(n.attr_int("start", 0)), end = clamp(n.attr_int("end", rank));
    SymbolicVector v;
    for (int64_t d = start; d < end; ++d) {
      const Dim& dim = s->dims[d];
      Element e;
      if (dim.known()) e.value = dim.value;
      e.source = n.inputs[0];
      e.axis = d;
      e.symbol = dim.symbol;
      v.elements.push_back(e);
    }
    return v;
  }

  std::optional<SymbolicVector> OfGather(const Node& n) const {
    auto data = Input(n, 0);
    auto indices = Input(n, 1);
    if (!data || data->scalar || !indices || !indices->known() || n.attr_int("axis", 0) != 0)
      return std::nullopt;
    SymbolicVector v;
    v.scalar = indices->scalar;
    v.dtype = data->dtype;
    const int64_t size = static_cast<int64_t>(data->elements.size());
    for (const Element& i : indices->elements) {
      const int64_t k = *i.value < 0 ? *i.value + size : *i.value;
      if (k < 0 || k >= size) return std::nullopt;
      v.elements.push_back(data->elements[k]);
    }
    return v;
  }

  std::optional<SymbolicVector> OfSlice(const Node& n) const {
    auto data = Input(n, 0);
    if (!data || data->scalar) return std::nullopt;
    std::vector<int64_t> starts, ends, axes{0}, steps{1};
    if (graph_.opset("") < 10) {
      starts = n.attr_ints("starts");
      ends = n.attr_ints("ends");
      axes = n.attr_ints("axes", {0});
    } else {
      auto s = IntConstant(graph_, n.has_input(1) ? n.inputs[1] : "");
      auto e = IntConstant(graph_, n.has_input(2) ? n.inputs[2] : "");
      if (!s || !e) return std::nullopt;
      starts = *s;
      ends = *e;
      if (n.has_input(3)) {
        auto a = IntConstant(graph_, n.inputs[3]);
        if (!a) return std::nullopt;
        axes = *a;
      }
      if (n.has_input(4)) {
        auto st = IntConstant(graph_, n.inputs[4]);
        if (!st) return std::nullopt;
        steps = *st;
      }
    }
    if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 ||
        (axes[0] != 0 && axes[0] != -1) || steps[0] != 1)
      return std::nullopt;
    const int64_t size = static_cast<int64_t>(data->elements.size());
    auto clamp = [size](int64_t i) { return std::min(std::max(i < 0 ? i + size : i, int64_t{0}), size); };
    SymbolicVector v;
    v.dtype = data->dtype;
    for (int64_t k = clamp(starts[0]); k < clamp(ends[0]); ++k) v.elements.push_back(data->elements[k]);
    return v;
  }

  std::optional<SymbolicVector> OfConcat(const Node& n) const {
    SymbolicVector v;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      auto part = Input(n, i);
      if (!part || part->scalar) return std::nullopt;
      v.dtype = part->dtype;
      v.elements.insert(v.elements.end(), part->elements.begin(), part->elements.end());
    }
    if (v.elements.size() > kMaxElements) return std::nullopt;
    return v;
  }

  std::optional<SymbolicVector> OfCast(const Node& n) const {
    auto v = Input(n, 0);
    const DataType to = static_cast<DataType>(n.attr_int("to", 0));
    if (!v || (to != DataType::kInt64 && to != DataType::kInt32)) return std::nullopt;
    v->dtype = to;
    return v;
  }

  // Unsqueeze of a scalar to [1] and Squeeze of a [1] to a scalar, axis 0.
  std::optional<SymbolicVector> OfSqueeze(const Node& n) const {
    auto v = Input(n, 0);
    if (!v) return std::nullopt;
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (n.has_input(1)) {
      auto a = IntConstant(graph_, n.inputs[1]);
      if (!a) return std::nullopt;
      axes = *a;
    }
    const bool unsqueeze = n.op_type == "Unsqueeze";
    if (axes.size() > 1 || (!axes.empty() && axes[0] != 0 && axes[0] != -1)) return std::nullopt;
    if (unsqueeze ? !v->scalar : (v->scalar || v->elements.size() != 1)) return std::nullopt;
    if (unsqueeze && axes.empty()) return std::nullopt;
    v->scalar = !unsqueeze;
    return v;
  }

  const Graph& graph_;
  std::map<std::string, SymbolicVector> values_;
};

Tensor ToTensor(const SymbolicVector& v, const std::vector<int64_t>& values) {
  Dims dims = v.scalar ? Dims{} : Dims{static_cast<int64_t>(values.size())};
  if (v.dtype == DataType::kInt32) {
    std::vector<int32_t> narrow(values.begin(), values.end());
    return Tensor::FromVector<int32_t>(narrow, dims);
  }
  return Tensor::FromVector<int64_t>(values, dims);
}

// The constant target for Reshape `n` given its symbolic target, when one exists.
std::optional<std::vector<int64_t>> ReshapeTarget(const Graph& graph, const Node& n,
                                                  const SymbolicVector& target) {
  if (n.attr_int("allowzero", 0) != 0 || target.scalar) return std::nullopt;
  const Shape* in = rewrite::KnownShape(graph, n.inputs[0]);
  std::vector<int64_t> out;
  int unresolved = 0;
  for (size_t p = 0; p < target.elements.size(); ++p) {
    const Element& e = target.elements[p];
    if (e.value) {
      if (*e.value == -1) ++unresolved;  // already inferred
      out.push_back(*e.value);
      continue;
    }
    Element own{std::nullopt, n.inputs[0], in && p < in->dims.size() ? in->dims[p].symbol : "",
                static_cast<int64_t>(p)};
    if (in && p < in->dims.size() && e.SameDim(own)) {
      out.push_back(0);
    } else {
      out.push_back(-1);
      ++unresolved;
    }
  }
  if (unresolved > 1) return std::nullopt;
  return out;
}

}  // namespace

int SimplifyShapes(Graph& graph) {
  Evaluator eval(graph);
  for (const Node& n : graph.nodes) eval.Evaluate(n);
  const ValueReaders readers(graph);
  int changes = 0;
  // Reshape targets first: they may be only partly known.
  for (Node& n : graph.nodes) {
    if (!IsOnnx(n, "Reshape") || n.inputs.size() < 2 || Constant(graph, n.inputs[1])) continue;
    const SymbolicVector* target = eval.Find(n.inputs[1]);
    if (!target) continue;
    auto values = ReshapeTarget(graph, n, *target);
    if (!values) continue;
    const std::string name = rewrite::FreshName(graph, n.inputs[1] + ".constant");
    graph.initializers[name] = Tensor::FromVector<int64_t>(*values, {static_cast<int64_t>(values->size())});
    n.inputs[1] = name;
    ++changes;
  }
  // Then every fully known vector that something still reads becomes an initializer.
  std::set<size_t> replaced;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const Node& n = graph.nodes[k];
    if (n.outputs.size() != 1) continue;
    const std::string& out = n.outputs[0];
    const SymbolicVector* v = eval.Find(out);
    if (!v || !v->known() || Constant(graph, out) || readers.pinned(out) || readers.nodes(out).empty())
      continue;
    std::vector<int64_t> values;
    for (const Element& e : v->elements) values.push_back(*e.value);
    graph.initializers[out] = ToTensor(*v, values);
    replaced.insert(k);
    ++changes;
  }
  rewrite::RemoveNodes(graph, replaced);
  return changes;
}

}  // namespace tandem
