// The subgraph exporters write for scaled dot-product attention,
//   Y = MatMul(P, V),  P = Softmax(Add(c * MatMul(a * Q, b * Kt), mask), last axis)
// (the scalar factors a, b, c from constant Muls and Divs, each optional, the mask Add
// optional, and the Softmax's output optionally passed through Where(IsNaN(P), 0, P), as
// PyTorch's exports of scaled_dot_product_attention do), rewritten as one ai.tandem
// FusedAttention(Q, Kt, V, mask) with scale = a * b * c (ops/tandem_ops.cc). Only float
// nodes all assigned to `provider` are rewritten ("": not yet placed), and only when every
// intermediate value has that one reader (P: IsNaN and Where), is not a graph output nor
// read by a subgraph, and Q, Kt and V have a known rank of 2 or more (from shape inference
// or the perm of the Transpose writing them; the mask may broadcast as Add allows). The scalar factors must be initializers: fold constants first.
// Used by the CPU provider after placement (providers/cpu/rewrites/attention_fusion.h) and
// by training before the gradients are built (training/training_graph.cc), where the
// fused node differentiates as one ai.tandem FusedAttentionGrad.
// Where Q, Kt and V are each written by the Transpose that splits the heads out of
// [B, S, H, D] (perms [0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]) and read only here and by
// Shape nodes, those Transposes go too and the fused node reads the heads in place
// (heads_interleaved; a Shape reads the Transpose's input, a Gather reorders its result),
// unless `heads_in_place` is false (the callers' TANDEM_ATTENTION_HEADS_IN_PLACE=0).
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem {

// Rewrites `graph` (in execution order); returns the number of attentions fused.
int FuseAttentionSubgraphs(Graph& graph, const std::string& provider, bool heads_in_place = true);

}  // namespace tandem
