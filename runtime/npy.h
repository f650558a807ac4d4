// NumPy .npy files <-> Tensor. ReadNpy takes what numpy writes and reads (format 1.0, 2.0
// and 3.0, runtime/npy_header.h; either byte order; C or Fortran order, returned in C
// order) from a regular file, and refuses anything else naming the file and what is wrong;
// WriteNpy writes format 1.0, little-endian, C order.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem {

absl::StatusOr<Tensor> ReadNpy(const std::string& path);
absl::Status WriteNpy(const std::string& path, const Tensor& t);

}  // namespace tandem
