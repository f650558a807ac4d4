// Graph -> ONNX ModelProto: the inverse of import, used to export trained models.
// Floating-point values in Graph::constants are written as Constant nodes, the other
// initializers as initializers, so what is trainable survives a round trip. The
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

// The lowest ONNX IR version that allows ai.onnx opset `opset` (never below 8).
int IrVersionForOpset(int opset);

// Writes `model` to `path` atomically. With `external_threshold` > 0, every initializer
// of at least that many bytes moves to one side file, `<path's file name>.data` in the
// same folder (written first, also atomically), and the model refers to it by that
// relative name with offsets, as the ONNX external-data format describes. Initializers
// already external must have been loaded inline first (import does that). A model over
// protobuf's 2 GiB limit is refused with a hint to use external data.
absl::Status WriteModelFile(onnx::ModelProto& model, const std::string& path,
                            size_t external_threshold = 0);

}  // namespace tandem
