#include "providers/cpu/rewrites/concat_norm.h"

#include <set>

#include "graph/passes.h"
#include "graph/value_readers.h"

namespace tandem::cpu {

namespace {

// A channel-blocked inference BatchNormalization of float32 parameters writing only Y.
bool IsBlockedInferenceBatchNorm(const Graph& graph, const Node& n) {
  if (!n.domain.empty() || n.op_type != "BatchNormalization" || n.attr_int("channel_block", 0) == 0 ||
      n.attr_int("training_mode", 0) != 0 || !n.has_output(0) || n.inputs.size() != 5)
    return false;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.has_output(i)) return false;
  for (size_t i = 0; i < 5; ++i)
    if (!n.has_input(i) || (i > 0 && graph.ValueType(n.inputs[i]) != DataType::kFloat)) return false;
  return true;
}

}  // namespace

int FuseConcatBatchNorm(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  const ValueReaders readers(graph);
  const std::map<std::string, size_t> producer = Producers(graph);
  std::set<size_t> folded;  // Concats merged into their BatchNormalization
  for (Node& bn : graph.nodes) {
    if (bn.provider != provider || !IsBlockedInferenceBatchNorm(graph, bn)) continue;
    auto from = producer.find(bn.inputs[0]);
    if (from == producer.end() || readers.Sole(bn.inputs[0]) < 0) continue;
    const Node& cat = graph.nodes[from->second];
    if (cat.provider != provider || !cat.domain.empty() || cat.op_type != "Concat" || cat.outputs.size() != 1 ||
        cat.attr_int("channel_block", 0) != bn.attr_int("channel_block", 0) || cat.inputs.empty())
      continue;
    bool pieces_ok = true;
    for (const std::string& in : cat.inputs) pieces_ok &= !in.empty();
    if (!pieces_ok) continue;
    std::vector<std::string> inputs(bn.inputs.begin() + 1, bn.inputs.end());  // scale, B, mean, var
    inputs.insert(inputs.end(), cat.inputs.begin(), cat.inputs.end());
    bn.inputs = std::move(inputs);
    bn.op_type = "ConcatBatchNorm";
    bn.domain = kTandemDomain;
    bn.name = (cat.name.empty() ? cat.op_type : cat.name) + "+" + (bn.name.empty() ? "BatchNormalization" : bn.name);
    folded.insert(from->second);
  }
  if (folded.empty()) return 0;
  RemoveNodes(graph, folded);
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  return static_cast<int>(folded.size());
}

}  // namespace tandem::cpu
