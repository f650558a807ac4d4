// NumPy .npy files (format 1.0/2.0, little-endian, C order) <-> Tensor.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem {

absl::StatusOr<Tensor> ReadNpy(const std::string& path);
absl::Status WriteNpy(const std::string& path, const Tensor& t);

}  // namespace tandem
