// Launch geometry shared by the .cu files: 256 threads a block, enough blocks for one
// element per thread (capped; the kernels use grid-stride loops).
#pragma once
#include <cstdint>

namespace tandem::cuda {

constexpr int kThreads = 256;

inline int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 8 ? (b > 0 ? b : 1) : 65535 * 8);
}

}  // namespace tandem::cuda
