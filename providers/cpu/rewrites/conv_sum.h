// Residual sums into the CPU's convolutions: Add(Conv(x), s) [-> Relu], the join of a
// residual block (resnet's conv2 + identity + Relu, mobilenet_v2's projection + skip),
// becomes one FusedConv(x, W, B, s) that oneDNN computes with a sum post-op (the
// convolution added onto s where it writes) and, with attribute sum_activation = "Relu",
// an eltwise post-op after it. The Add's and the Relu's passes over the tensor are gone.
//
// Conditions: every node is assigned to `provider`; the convolution (a Conv or FusedConv
// without a fused pool or activation, float, constant non-empty weights: oneDNN's jit
// kernels take a sum post-op only as the first; a channel Scale, input 4, stays) has the
// Add as its only reader and s has the
// convolution output's static shape (so also its layout: run after the blocked-layout
// pass, whose Adds read only blocked values); the Relu, when folded, is the Add's only
// reader. The fused node runs where the Add ran. Where, in the final node order, it is the
// last reader of s and s is a node's output no one else needs (not a graph output, input
// or initializer, not read by a subgraph, not the convolution's own input), the node gets
// sum_in_place = 1: the kernel may then write into s's buffer instead of a copy of it,
// when at run time nothing else shares that buffer. Training graphs are left alone.
#pragma once
#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of Adds folded.
int FuseConvResidualSum(Graph& graph, const std::string& provider);

// How many FusedConv runs of this process wrote their residual sum into s's own buffer
// (providers/cpu/kernels/nn/conv.cc; for tests).
int64_t ResidualSumsInPlace();

}  // namespace tandem::cpu
