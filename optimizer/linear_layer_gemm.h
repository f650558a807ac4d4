// Linear layers as one Gemm, for training: exporters write PyTorch's Linear on a [..., K]
// input, in a graph whose weights are not folded (a training-mode export), as
//   Y = Add(MatMul(A, Transpose(W, perm [1, 0])), b)       (the Add optional)
// with W [N, K] and b [N]. Each such layer becomes
//   Y = Reshape(Gemm(Reshape(A, [-1, K]), W, b, transB = 1), Shape(A)[:-1] ++ [N])
// (no Reshapes when A is known to be a matrix), so that neither pass transposes the weight
// (the GEMM reads it transposed) and the bias rides in the product; Gemm's gradient rule
// then gives dW [N, K] and db directly. W and b must be float32 graph inputs or initializers
// of known dims; the Add is taken only when it is the product's one reader and the product
// is not a graph output (a Transpose something else reads stays). Y keeps its name. Runs
// before the gradients are built (training/training_graph.cc; TANDEM_LINEAR_GEMM=0 skips it).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of layers rewritten.
int FuseLinearLayersIntoGemm(Graph& graph);

}  // namespace tandem
