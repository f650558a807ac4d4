// Small helpers shared by CPU kernels: axis handling, broadcasting, strides, and
// reading shape-like inputs. Header-only where templates need it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem::cpu {

// Maps a possibly negative axis into [0, rank); error if out of range.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank);
// Numpy-style broadcast of two (or more) shapes; error names both shapes.
absl::StatusOr<Dims> BroadcastShapes(const Dims& a, const Dims& b);
absl::StatusOr<Dims> BroadcastShapes(const std::vector<Dims>& shapes);
// Row-major element strides of `dims`.
std::vector<int64_t> Strides(const Dims& dims);
// Strides of `in` as seen from an output of shape `out` under broadcasting (0 on
// broadcast dims); `in` is right-aligned to `out`.
std::vector<int64_t> BroadcastStrides(const Dims& in, const Dims& out);
// Values of a 1-D (or scalar) integer tensor.
std::vector<int64_t> ReadInt64s(const Tensor& t);
// Product of dims[begin, end).
int64_t DimProduct(const Dims& dims, int begin, int end);

// Iterates over every output index of `out` shape, calling f(out_linear, in_offsets...)
// with broadcast input offsets. Used by reference elementwise kernels.
template <typename F>
void ForEachBroadcast(const Dims& out, const std::vector<std::vector<int64_t>>& in_strides,
                      F&& f) {
  const int rank = static_cast<int>(out.size());
  const int64_t n = NumElements(out);
  const size_t k = in_strides.size();
  std::vector<int64_t> idx(rank, 0), off(k, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(linear, off);
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j) off[j] += in_strides[j][d];
      if (idx[d] < out[d]) break;
      for (size_t j = 0; j < k; ++j) off[j] -= in_strides[j][d] * idx[d];
      idx[d] = 0;
    }
  }
}

}  // namespace tandem::cpu
