// Transpose cancellation, for channels-last models (tf2onnx writes a Transpose pair
// around every NCHW op of a Keras NHWC graph):
//  1. Transpose(Transpose(x, p), q) becomes one Transpose(x, p∘q), or Identity when the
//     composition is the identity.
//  2. Transposes pushed down through the layout-free ops after them (transpose_pushing.h),
//     where rule 1 cancels them — kept only when the graph ends with fewer Transposes
//     than rules 1 and 3 alone leave (pushing moves a Transpose that meets no inverse, and
//     the attention fusions match Transposes where the exporter wrote them).
//  3. A Transpose(x, [0, ...]) flattened by Reshape to [batch, K] and read only as the left
//     operand of MatMul or Gemm with an initializer weight: the Transpose goes, and the
//     weight's K rows are permuted instead (x's shape must be known past the batch dim,
//     and the Reshape's shape a constant [0 or batch, K or -1]). This is the Transpose
//     tf2onnx leaves before Keras's Flatten.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of rewrites made; dead nodes are removed (EliminateDeadCode), the
// Identity nodes of rule 1 are left for EliminateIdentities.
int OptimizeTransposes(Graph& graph);

}  // namespace tandem
