// Attention on the CPU as one node: the subgraph exporters write for scaled dot-product
// attention,
//   Y = MatMul(P, V),  P = Softmax(Add(c * MatMul(a * Q, b * Kt), mask), last axis)
// (the scalar factors a, b, c from constant Muls and Divs, each optional, the mask Add
// optional, and the Softmax's output optionally passed through Where(IsNaN(P), 0, P), as
// PyTorch's exports of scaled_dot_product_attention do), becomes one ai.tandem
// FusedAttention(Q, Kt, V, mask) with scale = a * b * c (kernels/nn/fused_attention.cc):
// the [..., S, L] scores are then made and used a block of rows at a time, in cache,
// instead of passing through memory four or five times (for Whisper's 1500 frames, 54 MB
// per layer each time). Only float nodes all assigned to `provider` are rewritten, and
// only when every intermediate value has that one reader (P: IsNaN and Where), is not a
// graph output nor read by a subgraph, and Q, Kt and V have a known rank of 2 or more
// (the mask may broadcast as Add allows: the kernel follows it).
// Training graphs are left alone (their gradient nodes read the intermediates), and so is
// every graph under TANDEM_CPU_FUSED_ATTENTION=0 (to compare, or to rule the fusion out).
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of attentions fused.
int FuseAttention(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
