// `tandem convert --quantize dynamic|static`: standard ONNX int8 models in the two forms
// ONNX Runtime's quantizer writes (and Tandem's CPU provider runs on its int8 kernels).
//
// dynamic: each MatMul whose B is a float32 constant matrix [K, N] (and each Gemm with a
//   constant B, alpha = beta = 1, transA = 0 and a constant or no 1-D C, written as that
//   MatMul and an Add of C) becomes
//     DynamicQuantizeLinear(A) -> MatMulInteger(A_q, B_q, A_zp, 0) -> Cast -> Mul(A_scale * B_scale) [-> Add C]
//   with B_q int8, symmetric per output column (B_scale[n] = max|B[:, n]| / 127).
// static (QDQ): the float model runs on `samples` and records the range of every value below;
//   each Conv, MatMul and Gemm (as above, any transB) with constant float32 weights then gets
//   its input and its output (the output of a Relu alone reading it, where there is one)
//   quantized and dequantized (uint8, asymmetric over [min(0, lo), max(0, hi)]), every reader
//   reading the dequantized value; weights int8, symmetric per output channel, through
//   DequantizeLinear; the bias int32 with scale x_scale * w_scale[m] through DequantizeLinear.
//   Sums of two float activations (Add) get their terms and result quantized the same way,
//   and a Relu alone reading a sum is dropped (the result's zero point is then 0: the
//   QuantizeLinear clips at 0 by itself).
//   Graph outputs keep their float values. Needs ai.onnx opset >= 13 (per-axis scales).
// Both first remove Identity nodes (exporters pass shared weights through them); weights
// computed by other nodes are quantized only after --optimize has folded them.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem::convert {

struct QuantizeReport {
  int layers = 0;       // MatMul/Gemm/Conv nodes given int8 weights
  int activations = 0;  // values quantized (static) or quantized dynamically (dynamic)
};

absl::StatusOr<QuantizeReport> QuantizeDynamic(Graph& graph);

// `samples`: the calibration inputs, one feed per run (at least one).
absl::StatusOr<QuantizeReport> QuantizeStatic(Graph& graph, const std::vector<std::map<std::string, Tensor>>& samples);

}  // namespace tandem::convert
