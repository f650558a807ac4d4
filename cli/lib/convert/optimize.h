// `tandem convert --optimize`: graph rewrites whose result is still standard ONNX (no
// ai.tandem ops), repeated until nothing changes (at most a few rounds):
// identity/Dropout removal, constant folding (on the CPU provider's kernels), shape
// simplification, Conv+BatchNormalization folding, bias folding (MatMul+Add -> Gemm,
// Conv+Add), Transpose cancellation, decomposed layer norms -> LayerNormalization (opset
// >= 17 only), dead-code elimination. See optimizer/onnx_rewrites/ for each rule's conditions.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem::convert {

// What each rewrite did, in the order first applied: ("Conv+BatchNormalization folded", 20).
using OptimizeReport = std::vector<std::pair<std::string, int>>;

absl::StatusOr<OptimizeReport> Optimize(Graph& graph);

}  // namespace tandem::convert
