// Conv + BatchNormalization folding: an inference-mode BatchNormalization (training_mode
// 0, only output Y used) whose input X is the only use of a Conv's output becomes part of
// that Conv, per output channel c:
//   s = scale[c] / sqrt(var[c] + epsilon);  W'[c] = W[c] * s;  B'[c] = (B[c] - mean[c]) * s + bias[c]
// when W, the Conv's B (if any) and the four BatchNormalization inputs are float32
// initializers. W' and B' are new initializers (W may be shared); the arithmetic is in
// double and rounded once.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of BatchNormalization nodes folded away.
int FoldConvBatchNorm(Graph& graph);

}  // namespace tandem
