// swish.h's loop, compiled once per instruction set: the including file defines SWISH_ISA
// (the namespace) and SWISH_LANES (floats per vector register) and is built with the
// matching compiler flags.
#include <cstdint>
#include <cstring>

#include "providers/cpu/microkernels/swish.h"

#define LANE_ISA SWISH_ISA
#define LANE_COUNT SWISH_LANES
#include "providers/cpu/microkernels/lane_vector.h"

namespace tandem::cpu::swish::SWISH_ISA {

using namespace tandem::cpu::SWISH_ISA::lanes;  // NOLINT: this build's vectors

inline Vec Swish(Vec x, Vec minus_alpha) { return x / (Splat(1.f) + Exp(minus_alpha * x)); }

inline void Run(float* p, int64_t n, float alpha) {
  const Vec ma = Splat(-alpha);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) Store(p + i, Swish(Load(p + i), ma));
  if (i < n) {  // the tail through a zero-padded vector
    float tail[kLanes] = {};
    std::memcpy(tail, p + i, static_cast<size_t>(n - i) * sizeof(float));
    Store(tail, Swish(Load(tail), ma));
    std::memcpy(p + i, tail, static_cast<size_t>(n - i) * sizeof(float));
  }
}

}  // namespace tandem::cpu::swish::SWISH_ISA
