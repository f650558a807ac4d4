// Per-channel scale folding, written as standard ONNX: a Mul of a convolution's output by a
// constant holding one value per output channel ([1, M, 1, ...], [M, 1, ...]) or one value
// in all, when that output has no other use, becomes part of the Conv:
//   Conv(X, W[, B]) * s  ->  Conv(X, W', B')   W'[m] = W[m] * s[m],  B'[m] = B[m] * s[m]
// when W (and B) are float32 initializers. W' and B' are new initializers (W may be
// shared); the arithmetic is in float64, rounded once. This is BatchNormalization as
// tf2onnx writes it for Keras (Mul, then an Add that FoldBiasAdds takes).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of Mul nodes folded away.
int FoldConvScales(Graph& graph);

}  // namespace tandem
