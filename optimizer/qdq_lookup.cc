#include "optimizer/qdq_lookup.h"

#include <map>
#include <set>
#include <vector>

#include "graph/passes.h"
#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {
namespace {

using rewrite::Constant;

const std::set<std::string> kFunctions = {
    "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Softplus",
    "Softsign", "Erf", "Gelu", "Mish", "Exp", "Neg", "Abs", "Sqrt", "ThresholdedRelu", "Clip"};

// Inputs 1 and 2 of a per-tensor (De)QuantizeLinear: a one-value float32 scale and a one-value
// 8-bit zero point, both initializers; the zero point's type in *type.
bool OneValueParams(const Graph& g, const Node& n, DataType* type) {
  if (n.outputs.size() != 1 || !n.has_input(1) || !n.has_input(2) || n.attr_int("block_size", 0) != 0) return false;
  const Tensor* z = rewrite::OneValueZeroPoint(g, n.inputs[2]);
  if (!rewrite::OneValueScale(g, n.inputs[1]) || !z) return false;
  *type = z->dtype();
  return true;
}

}  // namespace

int FuseQdqLookups(Graph& graph) {
  if (graph.opset("") < 10) return 0;
  const std::map<std::string, size_t> producers = Producers(graph);
  const ValueReaders readers(graph);
  std::map<size_t, std::vector<Node>> replacements;  // the function's index -> table nodes + lookup
  std::set<size_t> removed;                           // the QuantizeLinear of each
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& f = graph.nodes[i];
    if (!f.domain.empty() || !kFunctions.count(f.op_type) || f.outputs.size() != 1 || !f.has_input(0) ||
        readers.pinned(f.outputs[0]))
      continue;
    bool constant_rest = true;  // Clip's bounds
    for (size_t k = 1; k < f.inputs.size(); ++k)
      if (!f.inputs[k].empty() && !Constant(graph, f.inputs[k])) constant_rest = false;
    auto p = producers.find(f.inputs[0]);
    const int r = readers.Sole(f.outputs[0]);
    if (!constant_rest || p == producers.end() || r < 0) continue;
    const Node& dq = graph.nodes[p->second];
    const Node& q = graph.nodes[static_cast<size_t>(r)];
    DataType x_type, y_type;
    if (!rewrite::IsOnnx(dq, "DequantizeLinear") || !rewrite::IsOnnx(q, "QuantizeLinear") ||
        !OneValueParams(graph, dq, &x_type) || !OneValueParams(graph, q, &y_type))
      continue;
    const std::string base = f.name.empty() ? f.outputs[0] : f.name;
    // Every 8-bit value of x's type, in index order.
    Tensor values = Tensor::Host(x_type, {256});
    for (int v = 0; v < 256; ++v) static_cast<uint8_t*>(values.raw())[v] = static_cast<uint8_t>(x_type == DataType::kInt8 ? v ^ 0x80 : v);
    const std::string values_name = rewrite::FreshName(graph, base + "/table_input");
    graph.initializers[values_name] = std::move(values);
    graph.constants.insert(values_name);
    std::vector<Node>& made = replacements[i];
    Node t_dq = dq, t_f = f, t_q = q;
    t_dq.name = base + "/table_dequantize";
    t_dq.inputs[0] = values_name;
    t_dq.outputs = {rewrite::FreshName(graph, base + "/table_dequantized")};
    t_f.name = base + "/table_function";
    t_f.inputs[0] = t_dq.outputs[0];
    t_f.outputs = {rewrite::FreshName(graph, base + "/table_function_output")};
    t_q.name = base + "/table";
    t_q.inputs[0] = t_f.outputs[0];
    t_q.outputs = {rewrite::FreshName(graph, base + "/table")};
    Node lookup;
    lookup.name = base;
    lookup.op_type = "QLinearLookup";
    lookup.domain = kTandemDomain;
    lookup.inputs = {dq.inputs[0], t_q.outputs[0]};
    lookup.outputs = {q.outputs[0]};
    made = {t_dq, t_f, t_q, lookup};
    removed.insert(static_cast<size_t>(r));
  }
  if (replacements.empty()) return 0;
  std::vector<Node> nodes;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (removed.count(i)) continue;
    auto it = replacements.find(i);
    if (it == replacements.end()) {
      nodes.push_back(std::move(graph.nodes[i]));
    } else {
      for (Node& n : it->second) nodes.push_back(std::move(n));
    }
  }
  graph.nodes = std::move(nodes);
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  return static_cast<int>(replacements.size());
}

}  // namespace tandem
