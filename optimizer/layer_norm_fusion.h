// Layer normalization fusion: exporters before ONNX opset 17 (PyTorch's at opset 13, for
// one) write nn.LayerNorm as nine nodes over the last axis,
//   m = ReduceMean(x); d = x - m; v = ReduceMean(d ^ 2); n = d / Sqrt(v + eps);
//   y = n * gamma [+ beta]
// each a full pass over the activations. They become one LayerNormalization (domain
// ai.tandem, the opset-17 op's kernel: axis -1, epsilon eps, Scale gamma, B beta) when
// x is float32, both ReduceMeans reduce only the last axis with keepdims, the exponent
// is the constant 2, eps a constant scalar, gamma/beta constant vectors, and every
// intermediate value has no reader outside the pattern (nor is a graph output).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of layer normalizations fused. Runs after constant folding.
int FuseLayerNorm(Graph& graph);

}  // namespace tandem
