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

// sigmoid(z) from e = exp(-|z|), which never overflows: 1 / (1 + e) for z >= 0, e / (1 + e)
// below (down to 0 where e underflows: x * 0, NaN for x = -inf as x * sigmoid(x) gives).
inline Vec Swish(Vec x, Vec alpha) {
  const Vec z = alpha * x;
  const auto negative = z < Vec{};  // lanes of -1 where true
  const Vec e = Exp(negative ? z : -z);
  return x * ((negative ? e : Splat(1.f)) / (Splat(1.f) + e));
}

inline void Run(float* p, int64_t n, float alpha) {
  const Vec ma = Splat(alpha);
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
