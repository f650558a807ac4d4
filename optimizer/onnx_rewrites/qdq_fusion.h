// Statically quantized convolutions as quantizers write them in the QDQ format (ONNX
// Runtime's quantize_static, QuantFormat.QDQ) become one QLinearConv:
//   Conv(DequantizeLinear(xq, xs, xz), DequantizeLinear(wq, ws, wz) [, DequantizeLinear(bq, bs)])
//     [-> Relu] -> QuantizeLinear(., ys, yz)   =>   QLinearConv
// when: xs, xz, ys, yz are scalar initializers (8-bit zero points, float32 scales); wq is
// an 8-bit initializer with ws per tensor or per output channel (axis 0) and wz likewise
// (absent: zeros); bq an int32 initializer [M] whose scale is xs * ws (as float32, the
// product quantizers write, to a relative 1e-6) and zero point 0; the Conv's output is
// read only by the QuantizeLinear (or by a Relu read only by it, kept only where the
// Relu changes nothing: yz the lowest value of its type, so saturation already clips at 0).
// Likewise DequantizeLinear(a) and DequantizeLinear(b, a constant 8-bit matrix [K, N] per tensor
// or per column, axis 1) -> MatMul -> QuantizeLinear become one QLinearMatMul, and
// DequantizeLinear(a) -> Gemm(., DequantizeLinear(b constant, per output column) [, int32 bias
// through DequantizeLinear with scale a_scale * b_scale, or a float one]) with alpha = beta = 1
// and no transA becomes MatMulInteger -> Cast -> Mul(a_scale * b_scale) [-> Add(bias)] writing
// the Gemm's float output (exact integer sums; what the CPU runs as one MatMulIntegerToFloat).
// The fused node keeps the Conv's (MatMul's) name and attributes and writes the QuantizeLinear's output;
// DequantizeLinear nodes nothing reads any more go. Results may differ from the QDQ graph by
// one quantization level where the float32 convolution's rounding and QLinearConv's exact
// integer sums fall on either side of a rounding boundary (what ONNX Runtime's own fusion does).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of Conv, MatMul and Gemm nodes rewritten.
int FuseQdqNodes(Graph& graph);

}  // namespace tandem
