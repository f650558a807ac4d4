// Quantized residual sums on the CPU: static QDQ quantization writes each Add of two
// quantized values as DequantizeLinear(a, as, az), DequantizeLinear(b, bs, bz) -> Add ->
// QuantizeLinear(., cs, cz), three float32 passes and one 8-bit one. The four become one
// ai.tandem QLinearAdd(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale,
// C_zero_point) (ONNX Runtime's contrib op's inputs) reading and writing 8-bit values in one
// pass, with the nodes' own float arithmetic (bit for bit). Every scale and zero point must
// be a one-value initializer (float32 scales, 8-bit zero points); products (Mul: SiLU's and
// HardSwish's x * gate, squeeze-and-excitation's scaling) likewise become ai.tandem QLinearMul.
// The Add's (Mul's) output must
// be read only by the QuantizeLinear and not be a graph output. DequantizeLinear nodes nothing
// else reads go. Only nodes on `provider`; training graphs are left alone.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Returns the number of Adds and Muls rewritten.
int FuseQuantizedAdd(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
