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
  const Vec minus_abs = reinterpret_cast<Vec>(reinterpret_cast<const IVec&>(z) | INT32_MIN);  // sign bit set
  const Vec e = ExpUpTo88(minus_abs);
  return x * DivideByOneToTwo(z < Vec{} ? e : Splat(1.f), Splat(1.f) + e);
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

// In place over `rows` rows of B values (row r at p + r * B), adding each column's results to
// sums[0, B). Where B divides the register (B = 1: one plane of a plain map; 8 with
// AVX-512) the rows are run through as one array and the register's lanes folded at the end.
inline void RunAddingColumns(float* p, int64_t rows, int64_t B, float alpha, float* sums) {
  const Vec ma = Splat(alpha);
  if (B <= kLanes && kLanes % B == 0) {
    const int64_t n = rows * B;
    Vec acc{};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      const Vec y = Swish(Load(p + i), ma);
      Store(p + i, y);
      acc += y;
    }
    float lanes[kLanes];
    Store(lanes, acc);
    for (; i < n; ++i) {  // whole rows: lane i % B is column i % B, as in the register
      p[i] = Swish(Splat(p[i]), ma)[0];
      lanes[i % kLanes] += p[i];
    }
    for (int64_t k = 0; k < kLanes; ++k) sums[k % B] += lanes[k];
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    float* row = p + r * B;
    int64_t k = 0;
    for (; k + kLanes <= B; k += kLanes) {
      const Vec y = Swish(Load(row + k), ma);
      Store(row + k, y);
      Store(sums + k, Load(sums + k) + y);
    }
    for (; k < B; ++k) {
      row[k] = Swish(Splat(row[k]), ma)[0];
      sums[k] += row[k];
    }
  }
}

}  // namespace tandem::cpu::swish::SWISH_ISA
