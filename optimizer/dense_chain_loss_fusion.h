// Folds a mean-squared-error training step over a dense chain into one node. After the
// gradients are built, an MLP regressor's step reads
//   Y = DenseChain(X, W...)            L = MSELoss(Y, T)         dL = ScalarLike(L, 1)
//   dY = MSELossGrad(dL, Y, T)         (dX, dW..., dB...) = DenseChainGrad(dY, X, W...)
// and becomes one ai.tandem DenseChainMseGrad(X, T, W...) -> (L, dX, dW..., dB...), which
// computes the chain's forward once per tile of rows, the loss and its gradient inside
// that tile, then the backward (providers/cpu/kernels/nn/dense_chain_ops.cc). It applies only
// where Y, dL and dY have no other reader and are not graph outputs, the reduction is mean
// or sum, and the target is available where the chain starts.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of steps folded; the graph must be topologically sorted.
int FuseDenseChainMseLoss(Graph& graph);

}  // namespace tandem
