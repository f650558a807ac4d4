// Element-wise functions of one quantized value, as static QDQ quantization writes them
// (Sigmoid, HardSigmoid, Tanh, ... between a per-tensor DequantizeLinear and QuantizeLinear):
// an 8-bit input has 256 possible values, so DequantizeLinear -> f -> QuantizeLinear becomes
// one ai.tandem QLinearLookup(X, Table), Y[i] = Table[X[i]] (X uint8: index x; int8: x + 128).
// The table is those three nodes applied to every 8-bit value, written as nodes on a constant
// input: constant folding turns it into an initializer with the very kernels the graph would
// have run, so results are unchanged bit for bit. f: Sigmoid, HardSigmoid, HardSwish, Tanh,
// Relu, LeakyRelu, Elu, Selu, Celu, Softplus, Softsign, Erf, Gelu, Mish, Exp, Neg, Abs, Sqrt,
// ThresholdedRelu, or Clip with constant bounds; its output read only by the QuantizeLinear
// (one-value constant scale and zero point) and not a graph output. The DequantizeLinear stays
// while anything else reads it.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of functions replaced by lookups.
int FuseQdqLookups(Graph& graph);

}  // namespace tandem
