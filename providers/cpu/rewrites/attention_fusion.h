// Attention on the CPU as one node: ops/attention_subgraph.h's rewrite of the subgraph
// exporters write for scaled dot-product attention into ai.tandem FusedAttention
// (kernels/nn/fused_attention.cc): the [..., S, L] scores are then made and used a block of
// rows at a time, in cache, instead of passing through memory four or five times (for
// Whisper's 1500 frames, 54 MB per layer each time).
// Training graphs are left alone here (their gradient nodes read the intermediates; training
// fuses attention before the gradients are built, training/training_graph.cc), and so is
// every graph under TANDEM_CPU_FUSED_ATTENTION=0 (to compare, or to rule the fusion out);
// TANDEM_ATTENTION_HEADS_IN_PLACE=0 keeps the heads' Transposes (here and in training).
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of attentions fused.
int FuseAttention(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
