// ONNX ModelProto -> graph::Graph.
//
// ImportModelFile/ImportModelBuffer parse the protobuf, validate the model (libonnx's
// checker for opsets it knows, ≤ 17; Tandem's own structural checks always), run ONNX
// shape inference where libonnx knows the opsets, convert initializers (raw_data,
// typed fields, external data) and Constant nodes to tensors, and import subgraphs.
// Every failure is a Status whose message starts with "[import] <file>: " and names the
// node, op and problem. Nothing here throws or aborts on bad input.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem {

struct ImportOptions {
  bool run_checker = true;          // onnx::checker (only applied for opsets ≤ 17)
  bool run_shape_inference = true;  // onnx::shape_inference (only for opsets ≤ 17)
  // Symbolic dimension name -> value, set in the graph's inputs, outputs and value_info
  // before shape inference (so it propagates). Naming a dimension no input has is an error.
  std::map<std::string, int64_t> fixed_dims;
};

// Highest ai.onnx opset this importer accepts (onnx 1.23's), and the highest libonnx 1.12
// knows. What kernels do with versions past 21: providers/cpu/kernels/register.h.
constexpr int kMaxSupportedOpset = 28;
constexpr int kMaxLibOnnxOpset = 17;

absl::StatusOr<Graph> ImportModelFile(const std::string& path, const ImportOptions& options = {});
// `model_dir` anchors external data; "" forbids external data.
absl::StatusOr<Graph> ImportModelBuffer(const void* data, size_t size,
                                        const std::string& model_dir,
                                        const std::string& display_name = "<buffer>",
                                        const ImportOptions& options = {});

}  // namespace tandem
