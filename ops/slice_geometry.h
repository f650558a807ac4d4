// ONNX Slice's geometry, shared by every provider's Slice and SliceGrad kernels: which
// elements of x a slice selects, as a strided view (base offset, per-dim strides, output
// dims) of x's row-major layout.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem {

// One axis of Slice (numpy semantics): negative start/end count from the end and are
// clamped into the axis; a step longer than the axis (|step| > dim) is clamped, which
// selects the same elements and keeps index arithmetic free of overflow. `step` != 0.
struct SliceRange {
  int64_t start = 0, length = 0, step = 1;
};
SliceRange ResolveSliceRange(int64_t start, int64_t end, int64_t step, int64_t dim);

// y[i...] = x[base + sum_d i_d * strides[d]] for i within `out`.
struct SliceView {
  Dims out;
  std::vector<int64_t> strides;
  int64_t base = 0;
};
// The view a Slice of x (dims `x`) selects. `axes` empty means 0..n-1 and `steps` empty
// means all 1 (as absent inputs); errors name mismatched lengths, an axis out of range or
// repeated, and a zero step.
absl::StatusOr<SliceView> ResolveSlice(const Dims& x, const std::vector<int64_t>& starts,
                                       const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                       std::vector<int64_t> steps);

}  // namespace tandem
