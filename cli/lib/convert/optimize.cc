#include "cli/lib/convert/optimize.h"

#include <functional>
#include <memory>

#include "framework/execution_provider.h"
#include "graph/passes.h"
#include "optimizer/constant_folding.h"
#include "optimizer/layer_norm_fusion.h"
#include "optimizer/onnx_rewrites/bias_folding.h"
#include "optimizer/onnx_rewrites/conv_bn_folding.h"
#include "optimizer/onnx_rewrites/conv_scale_folding.h"
#include "optimizer/onnx_rewrites/identity_elimination.h"
#include "optimizer/onnx_rewrites/pad_conv_folding.h"
#include "optimizer/onnx_rewrites/shape_simplification.h"
#include "optimizer/onnx_rewrites/transpose_optimization.h"

namespace tandem::convert {

namespace {

// Folding may not grow the written model by more than this per node (e.g. a ConstantOfShape
// that would become a large initializer stays a node).
constexpr int64_t kMaxFoldGrowthBytes = 1 << 20;

// FuseLayerNorm writes the opset-17 op in Tandem's domain (for older models); from opset
// 17 on it is the standard op.
int FuseLayerNormAsStandard(Graph& graph) {
  if (graph.opset("") < 17) return 0;
  const int fused = FuseLayerNorm(graph);
  for (Node& n : graph.nodes)
    if (n.domain == kTandemDomain && n.op_type == "LayerNormalization") n.domain.clear();
  return fused;
}

}  // namespace

absl::StatusOr<OptimizeReport> Optimize(Graph& graph) {
  std::unique_ptr<ExecutionProvider> cpu_provider = CreateCpuProvider();
  ExecutionProvider& cpu = *cpu_provider;
  absl::Status fold_status;
  auto fold = [&](Graph& g) {
    auto n = FoldConstants(g, cpu, kMaxFoldGrowthBytes);
    if (!n.ok()) fold_status = n.status();
    return n.ok() ? *n : 0;
  };
  const std::vector<std::pair<std::string, std::function<int(Graph&)>>> passes = {
      {"Identity/Dropout nodes removed", EliminateIdentities},
      {"nodes folded into constants", fold},
      {"shape computations simplified", SimplifyShapes},
      {"zero Pads folded into Conv", FoldPadsIntoConvs},
      {"Conv+BatchNormalization folded", FoldConvBatchNorm},
      {"per-channel Muls folded into Conv", FoldConvScales},
      {"bias Adds folded into MatMul/Gemm/Conv", [](Graph& g) { return FoldBiasAdds(g); }},
      {"Transpose rewrites", OptimizeTransposes},
      {"layer norms fused into LayerNormalization", FuseLayerNormAsStandard},
      {"dead nodes removed", EliminateDeadCode},
  };
  OptimizeReport report;
  auto count = [&report](const std::string& what, int n) {
    for (auto& [name, total] : report)
      if (name == what) return void(total += n);
    report.emplace_back(what, n);
  };
  for (int round = 0; round < 4; ++round) {
    int changes = 0;
    for (const auto& [what, pass] : passes) {
      const int n = pass(graph);
      if (!fold_status.ok()) return fold_status;
      if (n > 0) count(what, n);
      changes += n;
    }
    if (auto s = graph.SortTopologically(); !s.ok()) return s;
    if (changes == 0) break;
  }
  if (auto s = graph.Validate(); !s.ok())
    return absl::InternalError("the optimized graph is invalid (a bug in a rewrite): " + std::string(s.message()));
  return report;
}

}  // namespace tandem::convert
