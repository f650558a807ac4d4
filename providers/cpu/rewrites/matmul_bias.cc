#include "providers/cpu/rewrites/matmul_bias.h"

#include <set>

#include "graph/passes.h"
#include "graph/value_readers.h"
#include "ops/fused_activation_attributes.h"
#include "providers/cpu/rewrites/float_constant.h"

namespace tandem::cpu {
namespace {

// The bias operand of `add` (the input that is not `y`) when it is a constant [n]: then
// Add(y, bias) has y's shape ([1, n] could raise a 1-D y's rank).
const std::string* BiasOf(const Graph& g, const Node& add, const std::string& y, int64_t n) {
  if (add.inputs.size() != 2 || add.outputs.size() != 1) return nullptr;
  const std::string& other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  if (other == y) return nullptr;
  const Tensor* bias = FloatConstant(g, other);
  return bias && bias->dims() == Dims{n} ? &other : nullptr;
}

// The activation node that alone reads `value` (as its first input) on `provider` and that
// a FusedMatMul can apply (ops/fused_activation_attributes.h), described onto `fused`; else -1.
int FoldableActivation(const Graph& g, const ValueReaders& readers, const std::string& value,
                       const std::string& provider, Node& fused) {
  const int k = readers.Sole(value);
  if (k < 0) return -1;
  const Node& act = g.nodes[static_cast<size_t>(k)];
  if (act.provider != provider || act.inputs.empty() || act.inputs[0] != value ||
      act.outputs.size() != 1)
    return -1;
  return DescribeFusedActivation(g, act, fused, FusableActivations::kCpu) ? k : -1;
}

}  // namespace

int FuseMatMulBias(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  const ValueReaders readers(graph);
  std::set<size_t> folded;  // indices of Add nodes merged into their MatMul
  int count = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& mm = graph.nodes[i];
    if (mm.provider != provider || !mm.domain.empty() || mm.op_type != "MatMul" ||
        mm.inputs.size() != 2 || mm.outputs.size() != 1)
      continue;
    const Tensor* b = FloatConstant(graph, mm.inputs[1]);
    const std::string& y = mm.outputs[0];
    if (!b || b->rank() != 2 || graph.ValueType(y) != DataType::kFloat) continue;
    const int reader = readers.Sole(y);
    if (reader < 0) continue;
    const Node& add = graph.nodes[static_cast<size_t>(reader)];
    if (add.provider != provider || !add.domain.empty() || add.op_type != "Add") continue;
    const std::string* bias = BiasOf(graph, add, y, b->dim(1));
    if (!bias) continue;
    mm.domain = kTandemDomain;
    mm.op_type = "FusedMatMul";
    mm.inputs.push_back(*bias);
    mm.outputs[0] = add.outputs[0];
    mm.name = mm.name + "+" + (add.name.empty() ? add.outputs[0] : add.name);
    folded.insert(static_cast<size_t>(reader));
    ++count;
    const int act = FoldableActivation(graph, readers, mm.outputs[0], provider, mm);
    if (act < 0) continue;
    const Node& a = graph.nodes[static_cast<size_t>(act)];
    mm.outputs[0] = a.outputs[0];
    mm.name += "+" + (a.name.empty() ? a.outputs[0] : a.name);
    folded.insert(static_cast<size_t>(act));
    ++count;
  }
  if (folded.empty()) return 0;
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  RemoveNodes(graph, folded);
  return count;
}

}  // namespace tandem::cpu
