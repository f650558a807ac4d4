#include "providers/cpu/rewrites/norm_relu.h"

#include <set>

#include "graph/passes.h"
#include "graph/value_readers.h"

namespace tandem::cpu {

namespace {

// An inference-mode BatchNormalization writing only Y (the CPU kernel applies the Relu on
// each of its paths: float32 plain or blocked, and the other types).
bool IsInferenceBatchNorm(const Node& n) {
  if (!n.domain.empty() || n.op_type != "BatchNormalization" || !n.has_output(0) || n.has_attr("activation"))
    return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.has_output(i)) return false;
  return n.attr_int("training_mode", 0) == 0 && n.has_input(0);
}

}  // namespace

int FuseBatchNormRelu(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  const ValueReaders readers(graph);
  std::set<size_t> folded;  // Relu nodes merged into their BatchNormalization
  for (Node& bn : graph.nodes) {
    if (bn.provider != provider || !IsInferenceBatchNorm(bn)) continue;
    const int reader = readers.Sole(bn.outputs[0]);
    if (reader < 0) continue;
    const Node& relu = graph.nodes[static_cast<size_t>(reader)];
    if (relu.provider != provider || !relu.domain.empty() || relu.op_type != "Relu" || relu.outputs.size() != 1 ||
        relu.inputs[0] != bn.outputs[0])
      continue;
    bn.attributes["activation"] = StringAttribute("Relu");
    bn.outputs[0] = relu.outputs[0];
    bn.name = (bn.name.empty() ? bn.op_type : bn.name) + "+" + (relu.name.empty() ? relu.op_type : relu.name);
    folded.insert(static_cast<size_t>(reader));
  }
  if (folded.empty()) return 0;
  RemoveNodes(graph, folded);
  return static_cast<int>(folded.size());
}

}  // namespace tandem::cpu
