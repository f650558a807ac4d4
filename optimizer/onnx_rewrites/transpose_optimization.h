// Transpose cancellation, for channels-last models (tf2onnx writes a Transpose pair
// around every NCHW op of a Keras NHWC graph):
//  1. Transpose(Transpose(x, p), q) becomes one Transpose(x, p∘q), or x itself when the
//     composition is the identity.
//  2. A Transpose whose only reader is an elementwise unary op (Relu, Sigmoid, Tanh,
//     LeakyRelu, Elu, Selu, Softplus, Abs, Neg, Exp, Erf, Sqrt, Cast, ...) that is read only
//     by Transposes moves below the op, where rule 1 cancels it.
//  3. A Transpose(x, [0, ...]) flattened by Reshape to [batch, K] and read only as the left
//     operand of MatMul or Gemm with an initializer weight: the Transpose goes, and the
//     weight's K rows are permuted instead (x's shape must be known past the batch dim,
//     and the Reshape's shape a constant [0 or batch, K or -1]). This is the Transpose
//     tf2onnx leaves before Keras's Flatten.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of rewrites made (run EliminateDeadCode afterwards).
int OptimizeTransposes(Graph& graph);

}  // namespace tandem
