#include "optimizer/onnx_rewrites/identity_elimination.h"

#include <optional>
#include <vector>

#include "graph/value_readers.h"
#include "ops/slice_geometry.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// A Pad of constant all-zero pads (input 1 from opset 11, the attribute before).
bool IsZeroPad(const Graph& graph, const Node& n) {
  if (!IsOnnx(n, "Pad") || n.inputs.empty() || !n.has_input(0) || !n.has_output(0)) return false;
  const std::optional<std::vector<int64_t>> pads = rewrite::PadAmounts(graph, n);
  if (!pads) return false;
  for (int64_t v : *pads)
    if (v != 0) return false;
  return true;
}

// The constant values of Slice input i, or of attribute `attr` before opset 10; when
// neither is given, `absent` (nullopt for the required starts and ends). nullopt when not
// constant.
std::optional<std::vector<int64_t>> SliceArgument(const Graph& graph, const Node& n, size_t i, const char* attr,
                                                  std::optional<std::vector<int64_t>> absent) {
  if (graph.opset("") < 10) return n.has_attr(attr) ? std::optional(n.attr_ints(attr)) : absent;
  if (!n.has_input(i)) return absent;
  return rewrite::IntConstant(graph, n.inputs[i], /*max_elements=*/64);
}

// A Slice that keeps every element: on each sliced axis (of a statically known size) step 1,
// and a start and end that ONNX resolves to the whole axis (slice_geometry.h). The legacy
// exporter writes timm GhostNet's x[:, :out_chs] so.
bool IsWholeSlice(const Graph& graph, const Node& n) {
  if (!IsOnnx(n, "Slice") || !n.has_input(0) || !n.has_output(0)) return false;
  const Shape* in = rewrite::KnownShape(graph, n.inputs[0]);
  if (!in) return false;
  const int64_t rank = static_cast<int64_t>(in->dims.size());
  const auto starts = SliceArgument(graph, n, 1, "starts", std::nullopt);
  const auto ends = SliceArgument(graph, n, 2, "ends", std::nullopt);
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::vector<int64_t> all_axes(starts->size());
  for (size_t k = 0; k < all_axes.size(); ++k) all_axes[k] = static_cast<int64_t>(k);
  const auto axes = SliceArgument(graph, n, 3, "axes", all_axes);
  const auto steps = SliceArgument(graph, n, 4, "steps", std::vector<int64_t>(starts->size(), 1));
  if (!axes || !steps || axes->size() != starts->size() || steps->size() != starts->size()) return false;
  for (size_t k = 0; k < starts->size(); ++k) {
    const int64_t axis = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
    if (axis < 0 || axis >= rank || (*steps)[k] != 1) return false;
    const Dim& d = in->dims[axis];
    if (!d.known()) return false;
    const SliceRange r = ResolveSliceRange((*starts)[k], (*ends)[k], 1, d.value);
    if (r.start != 0 || r.length != d.value) return false;
  }
  return true;
}

// x + 0, x - 0, x * 1 or x / 1 of a float32 x by a constant (input 1) of one value that
// broadcasts nothing: rank 0, or at most x's known rank.
bool IsNeutralArithmetic(const Graph& graph, const Node& n) {
  const bool additive = IsOnnx(n, "Add") || IsOnnx(n, "Sub");
  if (!(additive || IsOnnx(n, "Mul") || IsOnnx(n, "Div")) || n.inputs.size() != 2 || !n.has_input(0) ||
      n.outputs.size() != 1 || graph.ValueType(n.inputs[0]) != DataType::kFloat)
    return false;
  const Tensor* c = Constant(graph, n.inputs[1]);
  if (!c || c->dtype() != DataType::kFloat || c->numel() != 1 || c->data<float>()[0] != (additive ? 0.f : 1.f))
    return false;
  if (c->rank() == 0) return true;
  const Shape* x = rewrite::KnownShape(graph, n.inputs[0]);
  return x && static_cast<int>(x->dims.size()) >= c->rank();
}

// A node that copies its input unchanged whatever reads it: a zero Pad, a whole Slice or,
// when the graph's initializers are constants (no gradient nodes: not parameters being
// trained, whose 0 or 1 is only where they start), neutral arithmetic.
bool CopiesItsInput(const Graph& graph, const Node& n, bool constant_initializers) {
  return IsZeroPad(graph, n) || IsWholeSlice(graph, n) || (constant_initializers && IsNeutralArithmetic(graph, n));
}

bool PassesThrough(const Graph& graph, const Node& n, const ValueReaders& readers, bool constant_initializers) {
  if (n.inputs.empty() || !n.has_input(0) || !n.has_output(0)) return false;
  if (IsOnnx(n, "Identity") || CopiesItsInput(graph, n, constant_initializers)) return true;
  if (!IsOnnx(n, "Dropout")) return false;
  if (n.has_output(1) && (!readers.nodes(n.outputs[1]).empty() || readers.pinned(n.outputs[1])))
    return false;
  if (graph.opset("") < 7 && n.attr_int("is_test", 0) == 0) return false;
  if (!n.has_input(2)) return true;
  const Tensor* training = Constant(graph, n.inputs[2]);
  return training && training->dtype() == DataType::kBool && training->numel() == 1 &&
         !training->data<bool>()[0];
}

bool IsSource(const Graph& graph, const std::string& value) {
  if (graph.initializers.count(value)) return true;
  for (const ValueInfo& v : graph.inputs)
    if (v.name == value) return true;
  for (const std::string& o : graph.outer_scope_names)
    if (o == value) return true;
  return false;
}

// Removes the nodes `passes` accepts (see the header for how their output is rewired).
template <typename Passes>
int EliminatePassThrough(Graph& graph, Passes&& passes) {
  int removed = 0;
  std::optional<ValueReaders> readers;  // rebuilt after each removal
  for (size_t k = 0; k < graph.nodes.size();) {
    if (!readers) readers.emplace(graph);
    const Node& n = graph.nodes[k];
    if (!passes(n, *readers)) {
      ++k;
      continue;
    }
    const std::string in = n.inputs[0], out = n.outputs[0];
    if (!readers->pinned(out)) {
      rewrite::RedirectReads(graph, out, in);
    } else if (!IsSource(graph, in) && !readers->pinned(in)) {
      // `out` is a graph output: the producer of `in` writes `out` itself.
      for (Node& m : graph.nodes)
        for (std::string& o : m.outputs)
          if (o == in) o = out;
      rewrite::RedirectReads(graph, in, out);
    } else {
      ++k;
      continue;
    }
    rewrite::RemoveNodes(graph, {k});
    readers.reset();
    ++removed;
  }
  return removed;
}

}  // namespace

int EliminateIdentities(Graph& graph) {
  const bool constant_initializers = !graph.HasGradientNodes();
  return EliminatePassThrough(graph, [&](const Node& n, const ValueReaders& readers) {
    return PassesThrough(graph, n, readers, constant_initializers);
  });
}

int EliminateCopyingNodes(Graph& graph) {
  const bool constant_initializers = !graph.HasGradientNodes();
  return EliminatePassThrough(
      graph, [&](const Node& n, const ValueReaders&) { return CopiesItsInput(graph, n, constant_initializers); });
}

}  // namespace tandem
