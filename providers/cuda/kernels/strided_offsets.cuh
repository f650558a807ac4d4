// Device side of StridedIndex (launch.h): where output element i lies in each operand.
#pragma once
#include <cstdint>

#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {

// Offsets of output element i in operands a and b.
__device__ __forceinline__ void Offsets(const StridedIndex& ix, int64_t i, int64_t* oa, int64_t* ob) {
  int64_t a = 0, b = 0;
  for (int d = ix.rank - 1; d >= 0; --d) {
    const int64_t c = i % ix.dims[d];
    i /= ix.dims[d];
    a += c * ix.stride_a[d];
    b += c * ix.stride_b[d];
  }
  *oa = a;
  *ob = b;
}

}  // namespace tandem::cuda
