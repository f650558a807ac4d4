// MatMul + BatchNormalization folding, for LeViT's Linear + BatchNorm1d as exported (timm's
// LinearNorm: x @ W flattened to [rows, N], BatchNormalization over the N columns, reshaped
// back): an inference BatchNormalization of N channels (rewrite_util.h's InferenceBatchNorm)
// reading MatMul(X, W) of rank 2 directly, or through a Flatten to rank 2 at the product's
// last axis (the TorchScript export) or a Reshape to [rows, N] (the dynamo export), each value read by the next node alone (the product also by Shape nodes, whose
// result the fold keeps) and none a graph output, W a float32
// [K, N] initializer. The MatMul takes W[:, c] * a[c] (a new initializer, in float64 and
// rounded once), an Add of s (one value per column) follows it, and the
// BatchNormalization's readers read its input instead.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of BatchNormalization nodes folded away.
int FoldMatMulBatchNorm(Graph& graph);

}  // namespace tandem
