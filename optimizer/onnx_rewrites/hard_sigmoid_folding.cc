#include "optimizer/onnx_rewrites/hard_sigmoid_folding.h"

#include <cmath>
#include <optional>
#include <set>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

// The value of a one-element float32 initializer, else nullopt.
std::optional<float> ScalarConstant(const Graph& graph, const std::string& value) {
  const Tensor* t = rewrite::Constant(graph, value);
  if (!t || t->dtype() != DataType::kFloat || t->numel() != 1) return std::nullopt;
  return t->data<float>()[0];
}

// The input of `n` that is not the scalar constant `c` when `n` is `op` of a value and `c`
// (either order when `commutes`, else the constant second), writing one value; else "".
std::string OtherThanScalar(const Graph& graph, const Node& n, const char* op, float c, bool commutes) {
  if (!rewrite::IsOnnx(n, op) || n.inputs.size() != 2 || n.outputs.size() != 1) return "";
  for (int s : {0, 1}) {
    if (s == 1 && !commutes) break;
    auto v = ScalarConstant(graph, n.inputs[1 - s]);
    if (v && std::abs(*v - c) <= 1e-6f * std::abs(c)) return n.inputs[s];
  }
  return "";
}

// Clip to [0, 6].
bool IsRelu6(const Graph& graph, const Node& n) {
  if (!rewrite::IsOnnx(n, "Clip") || !n.has_input(0) || n.outputs.size() != 1) return false;
  if (graph.opset("") < 11) return n.attr_float("min", -1) == 0.f && n.attr_float("max", -1) == 6.f;
  auto lo = n.has_input(1) ? ScalarConstant(graph, n.inputs[1]) : std::nullopt;
  auto hi = n.has_input(2) ? ScalarConstant(graph, n.inputs[2]) : std::nullopt;
  return lo == 0.f && hi == 6.f;
}

}  // namespace

int FoldSpelledOutHardSigmoids(Graph& graph) {
  const ValueReaders readers(graph);
  std::set<size_t> removed;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const std::string x = OtherThanScalar(graph, graph.nodes[k], "Add", 3.f, true);
    if (x.empty() || graph.ValueType(x) != DataType::kFloat) continue;
    const int clip = readers.Sole(graph.nodes[k].outputs[0]);
    if (clip < 0 || !IsRelu6(graph, graph.nodes[clip]) || graph.nodes[clip].inputs[0] != graph.nodes[k].outputs[0])
      continue;
    const std::string& clipped = graph.nodes[clip].outputs[0];
    const int scale = readers.Sole(clipped);
    if (scale < 0) continue;
    const Node& s = graph.nodes[scale];
    if (OtherThanScalar(graph, s, "Mul", 1.f / 6, true) != clipped && OtherThanScalar(graph, s, "Div", 6.f, false) != clipped)
      continue;
    Node& n = graph.nodes[k];
    n.name = n.name + "+" + graph.nodes[clip].name + "+" + s.name;
    n.op_type = "HardSigmoid";
    n.inputs = {x};
    n.outputs = s.outputs;
    n.attributes.clear();
    n.attributes["alpha"] = FloatAttribute(1.f / 6);
    n.attributes["beta"] = FloatAttribute(0.5f);
    removed.insert(clip);
    removed.insert(scale);
  }
  rewrite::RemoveNodes(graph, removed);
  return static_cast<int>(removed.size() / 2);
}

}  // namespace tandem
