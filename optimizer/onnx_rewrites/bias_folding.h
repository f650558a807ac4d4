// Bias folding, written as standard ONNX: an Add of a constant bias into the op that
// produced its other operand, when that operand has no other use.
//   MatMul(A, W) + C  -> Gemm(A, W, C)   A known to be a matrix, W a 2-D initializer,
//                                        C a constant of shape [N] or [1, N]
//   Gemm(A, W) + C    -> Gemm(A, W, C)   the Gemm had no C (so beta was unused: set to 1)
//   Conv(X, W[, B]) + C -> Conv(X, W, C') C holds one value per output channel
//                                        ([1, M, 1, ...], [M, 1, ...]); C' is [M] (B + C where
//                                        the Conv had a constant bias B)
// Only float32 operands are rewritten.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of Add nodes folded away; with `convolutions_only`, only into Convs (a
// session's rewrites, where the CPU provider's own MatMul rewrites take the MatMul + Add).
int FoldBiasAdds(Graph& graph, bool convolutions_only = false);

}  // namespace tandem
