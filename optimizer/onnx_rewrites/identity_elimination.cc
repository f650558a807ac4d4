#include "optimizer/onnx_rewrites/identity_elimination.h"

#include <optional>
#include <vector>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// A Pad of constant all-zero pads (input 1 from opset 11, the attribute before).
bool IsZeroPad(const Graph& graph, const Node& n) {
  if (!IsOnnx(n, "Pad") || n.inputs.empty() || !n.has_input(0) || !n.has_output(0)) return false;
  std::vector<int64_t> pads;
  if (graph.opset("") >= 11) {
    const Tensor* p = n.has_input(1) ? Constant(graph, n.inputs[1]) : nullptr;
    if (!p || p->dtype() != DataType::kInt64) return false;
    pads.assign(p->data<int64_t>(), p->data<int64_t>() + p->numel());
  } else {
    pads = n.attr_ints(graph.opset("") < 2 ? "paddings" : "pads");
  }
  for (int64_t v : pads)
    if (v != 0) return false;
  return true;
}

bool PassesThrough(const Graph& graph, const Node& n, const ValueReaders& readers) {
  if (n.inputs.empty() || !n.has_input(0) || !n.has_output(0)) return false;
  if (IsOnnx(n, "Identity") || IsZeroPad(graph, n)) return true;
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
  return EliminatePassThrough(graph, [&graph](const Node& n, const ValueReaders& readers) {
    return PassesThrough(graph, n, readers);
  });
}

int EliminateZeroPads(Graph& graph) {
  return EliminatePassThrough(graph, [&graph](const Node& n, const ValueReaders&) { return IsZeroPad(graph, n); });
}

}  // namespace tandem
