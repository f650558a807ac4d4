// onnx::TensorProto <-> Tensor. Reading honours raw_data, the typed repeated fields and
// external data; external files must stay inside the model's folder (no absolute paths,
// no "..", no symlinks that leave it).
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem {

// `model_dir` is the folder of the model file ("" when the model came from memory: then
// external data is refused).
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto,
                                       const std::string& model_dir);
// Writes `t` (host) into `proto` as raw_data (strings as string_data).
void TensorToProto(const Tensor& t, std::string name, onnx::TensorProto* proto);

// Parses a whole ModelProto (or checkpoint) with the importer's limits: under 2 GiB,
// messages nested at most 256 deep. False when the bytes are not one such message.
bool ParseModelProto(const void* data, size_t size, onnx::ModelProto* model);

}  // namespace tandem
