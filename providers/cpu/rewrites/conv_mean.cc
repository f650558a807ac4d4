#include "providers/cpu/rewrites/conv_mean.h"

#include <map>
#include <set>

#include "framework/env_switch.h"
#include "graph/passes.h"
#include "graph/value_readers.h"

namespace tandem::cpu {
namespace {

// A FusedConv whose Swish pass can take its output's channel means, in channel_block `block`.
bool TakesMeans(const Node& n, const std::string& provider, int64_t block) {
  return n.provider == provider && n.domain == kTandemDomain && n.op_type == "FusedConv" && n.outputs.size() == 1 &&
         n.attr_string("activation", "") == "Swish" && !n.has_attr("pool") && !n.has_input(3) &&
         n.attr_int("channel_block", 0) == block && n.attr_int("blocked_output", 1) != 0;
}

}  // namespace

int FuseConvChannelMean(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes() || SwitchedOff("TANDEM_CPU_CONV_MEAN")) return 0;
  const std::map<std::string, size_t> producers = Producers(graph);
  std::set<size_t> folded;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& pool = graph.nodes[i];
    const int64_t block = pool.attr_int("channel_block", 0);
    if (pool.provider != provider || !pool.domain.empty() || pool.op_type != "GlobalAveragePool" || block == 0 ||
        pool.inputs.size() != 1 || pool.outputs.size() != 1 || graph.ValueType(pool.outputs[0]) != DataType::kFloat)
      continue;
    auto p = producers.find(pool.inputs[0]);
    if (p == producers.end()) continue;
    Node& conv = graph.nodes[p->second];
    if (!TakesMeans(conv, provider, block) || graph.ValueType(conv.outputs[0]) != DataType::kFloat) continue;
    conv.outputs.push_back(pool.outputs[0]);
    conv.name = (conv.name.empty() ? conv.op_type : conv.name) + "+" + (pool.name.empty() ? pool.op_type : pool.name);
    folded.insert(i);
  }
  RemoveNodes(graph, folded);
  return static_cast<int>(folded.size());
}

}  // namespace tandem::cpu
