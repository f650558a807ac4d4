// Training checkpoints: parameters, optimizer state, step, epoch and the shuffling RNG
// state, stored as an ONNX ModelProto (initializers + metadata_props) so the file is
// parsed by real protobuf code and inspectable with ONNX tools. Written atomically
// (temporary file, fsync, rename): a crash mid-write leaves the previous checkpoint.
// Dropout needs no RNG state here: its masks are a function of the step
// (training/training_graph.h).
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

// Errors name the file and errno's text; on failure the file at `path` is unchanged.
absl::Status SaveCheckpoint(const std::string& path, const Checkpoint& c);
// Errors name the file and what is wrong (not a checkpoint, truncated, a missing field, a
// step or epoch that is not an integer in [0, 2^53]).
absl::StatusOr<Checkpoint> LoadCheckpoint(const std::string& path);

// "" when every parameter and state tensor of `c` is finite, else the first that holds
// a NaN or Inf ("parameter 'fc1.weight'", "optimizer state 'fc1.weight/m'"): such a
// checkpoint would resume a diverged run.
std::string NonFiniteTensor(const Checkpoint& c);

}  // namespace tandem::training
