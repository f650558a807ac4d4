// A transpose by oneDNN's reorder: dst[i] = src[offset(i)] for every row-major index i of
// `dims`, offset the dot product of i with positive element `strides` (kernel_util.h
// TransposeCopy's contract), for the Transpose kernel and any other strided copy of
// feature maps. oneDNN's jit reorder moves vectors through registers; the scalar tiles of
// TransposeCopy read one element per load (a 49 x 1024 channels-last map: 39 us against
// 11 us on Zen 5). The primitive is built once per (dims, strides, width) and kept.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "providers/cpu/dnnl_util.h"

namespace tandem::cpu {

class StridedReorder {
 public:
  // From this many elements a reorder beats the scalar tiles (its call costs a few us).
  static constexpr int64_t kMinElements = int64_t{1} << 12;

  // Copies as above and returns true when the view is one oneDNN takes: 1- or 4-byte
  // elements (moved bit for bit as u8 / s32), at least kMinElements, at most 12 dims
  // after size-1 dims are dropped and contiguous ones merged, innermost stride not 1 (a
  // transpose; contiguous rows copy as fast by memcpy). Returns false, having written
  // nothing, otherwise; an error when oneDNN fails.
  absl::StatusOr<bool> Copy(const void* src, const Dims& dims, const std::vector<int64_t>& strides, int width,
                            void* dst);

 private:
  struct Entry {
    dnnl::reorder prim;
    dnnl::memory from, to;
  };
  std::map<std::tuple<Dims, std::vector<int64_t>, int>, Entry> cache_;
};

}  // namespace tandem::cpu
