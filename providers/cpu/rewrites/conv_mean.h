// A squeeze-and-excitation pool folded into the Swish convolution it reads, on the CPU.
//
// EfficientNet's blocks pool the depthwise convolution's SiLU output over its pixels
// (GlobalAveragePool, or a spatial ReduceMean that the blocked-layout pass makes one) while
// the map also goes on to the gated projection. The pool reads the whole map again, after it
// has left the cache; the convolution's own Swish pass (microkernels/swish.h) has every value
// in a register already. This pass gives the convolution the pool's output as its output 1,
// Mean (FusedConv's channel means of Y, in Y's layout: what the blocked pool wrote), and
// drops the pool.
//
// Conditions: a GlobalAveragePool with channel_block B != 0 and a FusedConv with activation
// Swish (which runs as that pass) writing the pool's input with the same channel_block, a
// blocked output, no fused pool, residual sum or output 1 yet; float, both on `provider`.
// Run after the blocked-layout pass. Training graphs are left alone.
// TANDEM_CPU_CONV_MEAN=0 turns it off.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of pools folded.
int FuseConvChannelMean(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
