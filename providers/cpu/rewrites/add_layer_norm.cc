#include "providers/cpu/rewrites/add_layer_norm.h"

#include <map>
#include <set>
#include <vector>

#include "graph/passes.h"
#include "graph/static_shape.h"
#include "graph/value_readers.h"
#include "framework/env_switch.h"

namespace tandem::cpu {
namespace {

// A constant float vector: its size, else -1.
int64_t ConstantVector(const Graph& g, const std::string& name) {
  auto it = g.initializers.find(name);
  return it != g.initializers.end() && it->second.dtype() == DataType::kFloat && it->second.rank() == 1
             ? it->second.dim(0)
             : -1;
}

bool IsLayerNorm(const Graph& g, const Node& n) {
  const bool onnx = n.domain.empty() && g.opset("") >= 17, ours = n.domain == kTandemDomain;
  if (n.op_type != "LayerNormalization" || !(onnx || ours) || n.inputs.size() < 2 || n.inputs.size() > 3) return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (!n.outputs[i].empty()) return false;  // Mean / InvStdDev wanted
  const ValueInfo* x = g.FindValueInfo(n.inputs[0]);
  const int64_t axis = n.attr_int("axis", -1);
  const bool last = axis == -1 || (x && x->shape.rank_known && axis == static_cast<int64_t>(x->shape.dims.size()) - 1);
  const int64_t size = ConstantVector(g, n.inputs[1]);
  return last && size > 0 && (n.inputs.size() < 3 || n.inputs[2].empty() || ConstantVector(g, n.inputs[2]) == size);
}

}  // namespace

int FuseAddLayerNorm(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes() || SwitchedOff("TANDEM_CPU_ADD_LAYER_NORM")) return 0;
  const ValueReaders readers(graph);
  const std::map<std::string, size_t> producer = Producers(graph);
  std::set<size_t> removed;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& ln = graph.nodes[i];
    if (ln.provider != provider || !IsLayerNorm(graph, ln) || graph.ValueType(ln.outputs[0]) != DataType::kFloat)
      continue;
    auto it = producer.find(ln.inputs[0]);
    if (it == producer.end()) continue;
    Node& add = graph.nodes[it->second];
    if (add.provider != provider || !add.domain.empty() || add.op_type != "Add" || add.inputs.size() != 2 ||
        add.outputs.size() != 1 || graph.ValueType(add.outputs[0]) != DataType::kFloat ||
        !SameStaticShape(graph, add.inputs[0], add.inputs[1]) || !SameStaticShape(graph, add.inputs[0], add.outputs[0]))
      continue;
    // Scale (and B) must span the last dim itself: LayerNormalization would broadcast a [1].
    const std::vector<Dim>& dims = graph.FindValueInfo(add.outputs[0])->shape.dims;
    if (dims.empty() || !dims.back().known() || dims.back().value != ConstantVector(graph, ln.inputs[1])) continue;
    const bool sum_read_elsewhere = readers.Sole(add.outputs[0]) != static_cast<int>(i);
    const std::string sum = add.outputs[0];
    add.domain = kTandemDomain;
    add.op_type = "AddLayerNormalization";
    add.inputs.push_back(ln.inputs[1]);
    if (ln.inputs.size() > 2 && !ln.inputs[2].empty()) add.inputs.push_back(ln.inputs[2]);
    add.outputs = {ln.outputs[0]};
    if (sum_read_elsewhere) add.outputs.push_back(sum);
    add.attributes.clear();
    add.attributes["epsilon"] = FloatAttribute(ln.attr_float("epsilon", 1e-5f));
    add.name = add.name + "+" + (ln.name.empty() ? ln.outputs[0] : ln.name);
    removed.insert(i);
  }
  if (removed.empty()) return 0;
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  RemoveNodes(graph, removed);
  return static_cast<int>(removed.size());
}

}  // namespace tandem::cpu
