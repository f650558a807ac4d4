// Counter-based Dropout masks: whether element i is kept is a pure function of
// (seed, counter, i, ratio), with no generator state between calls. The training graph
// feeds the optimizer step as the counter (training/training_graph.h), so a checkpoint
// (which stores the step) resumes with the very masks an uninterrupted run draws, and
// elements can be decided in any order or in parallel.
//
// The bits are output i of SplitMix64 (Steele, Lea and Flood 2014) seeded with
// SplitMix64(seed ^ SplitMix64(counter)): 64-bit integer arithmetic only, so a CUDA
// kernel that includes this header (TANDEM_HD makes the functions __host__ __device__
// under nvcc) draws bit-identical masks.
#pragma once
#include <cstdint>

#include "ops/host_device.h"

namespace tandem::dropout {

TANDEM_HD inline uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The stream of one Dropout node at one counter value (computed once per call).
TANDEM_HD inline uint64_t StreamKey(uint64_t seed, uint64_t counter) {
  return SplitMix64(seed ^ SplitMix64(counter));
}

// Element i is kept when its uniform draw in [0, 1) (24 bits, exact in float) is at
// least `ratio`: P(keep) = 1 - ratio, rounded to a multiple of 2^-24.
TANDEM_HD inline bool Keep(uint64_t key, uint64_t i, float ratio) {
  const uint64_t bits = SplitMix64(key + i * 0x9e3779b97f4a7c15ull);
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f) >= ratio;
}

}  // namespace tandem::dropout
