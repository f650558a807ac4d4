// On CPUs without 8-bit dot products that never saturate (no VNNI or AMX: Int8DotProductsExact()
// is false), QLinearConv's exact integer sums run through float32 blocks at a fraction of a
// float32 convolution's speed (kernels/quantization/quantized_ops.cc). There each QLinearConv
// on `provider` with constant weights (and bias, and x_scale when there is a bias) becomes
// the QDQ graph it stands for:
//   DequantizeLinear(x, x_scale, x_zero_point) -> Conv(W', B') -> QuantizeLinear(., y_scale, y_zero_point)
// with W' = (w - w_zero_point[m]) * w_scale[m] and B' = b * (x_scale * w_scale[m]) in float32,
// computed as DequantizeLinear computes them, so that the float32 convolutions, their fusions
// and the blocked layout apply. Results are within float32 rounding of QLinearConv's
// definition (a value on a rounding boundary can land one level away), as the QDQ graph's.
// Where the CPU has VNNI or AMX, and in training graphs, nothing changes.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Returns the number of QLinearConvs rewritten.
int QLinearConvInFloat(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
