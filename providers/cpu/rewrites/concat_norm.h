// Concat + BatchNormalization on the CPU's channel-blocked layout: a Concat whose only
// reader is an inference BatchNormalization [+ Relu] (densenet: every layer normalizes
// and rectifies the concatenation of all earlier features, and nothing else reads it)
// becomes one ConcatBatchNorm(scale, B, mean, var, pieces...) node
// (providers/cpu/kernels/nn/concat_norm_ops.cc), which writes the normalized concatenation
// straight from the pieces: the concatenation is neither written nor read again.
// Both nodes must be assigned to `provider` and run channel-blocked with the same
// channel_block (blocked_layout.h; run after UseChannelBlockedLayout and
// FuseBatchNormRelu), the Concat's output must have no other reader, not be a graph output
// and not be read by a subgraph, and the parameters must be float32. Training graphs are
// left alone.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of Concats folded.
int FuseConcatBatchNorm(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
