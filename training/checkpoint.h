// Training checkpoints: parameters, optimizer state, step, epoch and the shuffling RNG
// state, stored as an ONNX ModelProto (initializers + metadata_props) so the file is
// parsed by real protobuf code and inspectable with ONNX tools. Written atomically
// (temporary file, fsync, rename): a crash mid-write leaves the previous checkpoint.
#pragma once
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem::training {

struct Checkpoint {
  int64_t step = 0;   // optimizer steps taken
  int64_t epoch = 0;  // epochs completed
  std::string rng_state;
  std::map<std::string, Tensor> params;  // trainable parameters
  std::map<std::string, Tensor> state;   // optimizer state tensors
};

absl::Status SaveCheckpoint(const std::string& path, const Checkpoint& c);
// Errors name the file and what is wrong (not a checkpoint, truncated, missing fields).
absl::StatusOr<Checkpoint> LoadCheckpoint(const std::string& path);

}  // namespace tandem::training
