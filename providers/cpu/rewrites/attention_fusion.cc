#include "providers/cpu/rewrites/attention_fusion.h"

#include "framework/env_switch.h"
#include "ops/attention_subgraph.h"

namespace tandem::cpu {

int FuseAttention(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes() || SwitchedOff("TANDEM_CPU_FUSED_ATTENTION")) return 0;
  return FuseAttentionSubgraphs(graph, provider, !SwitchedOff("TANDEM_ATTENTION_HEADS_IN_PLACE"));
}

}  // namespace tandem::cpu
