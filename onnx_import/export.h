// Graph -> ONNX ModelProto: the inverse of import, used to export trained models. The
// result is checked with libonnx's checker (for opsets it knows) before it is written;
// graphs holding Tandem-internal ops (domain ai.tandem) are refused.
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem {

absl::StatusOr<onnx::ModelProto> ExportModel(const Graph& graph,
                                             const std::string& producer = "tandem");
// Writes atomically: a temporary file in the same folder, fsync, rename.
absl::Status ExportModelFile(const Graph& graph, const std::string& path);

}  // namespace tandem
