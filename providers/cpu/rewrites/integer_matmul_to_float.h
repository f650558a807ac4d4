// Dynamic quantization's layers on the CPU (onnxruntime.quantization.quantize_dynamic writes
// each MatMul as DynamicQuantizeLinear -> MatMulInteger -> Cast to float -> Mul by the two
// scales' product [-> Add of the layer's bias]): the MatMulInteger, Cast, Mul and Add become
// one ai.tandem MatMulIntegerToFloat(A, B, scale, a_zero_point, b_zero_point, bias) that
// writes float32 straight from the int32 sums (no int32 and no intermediate float tensor);
// its arithmetic is the nodes' own (float(sum) * scale, then + bias), so results are
// unchanged bit for bit. B must be a constant matrix [K, N], the scale one value or [N]
// (a per-column weight scale) by its recorded shape or, where inference left none, as the
// product of DynamicQuantizeLinear's scale and constant ones; the bias a constant float [N]. Only
// nodes all on `provider` are rewritten, and only when each intermediate value has that one
// reader and is not a graph output. Training graphs are left alone.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of nodes folded
// (Casts, Muls and Adds).
int FuseMatMulIntegerToFloat(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
