// weighted_rows.h's loop, compiled once per instruction set: the including file defines
// WEIGHTED_ROWS_ISA (the namespace) and WEIGHTED_ROWS_LANES (floats per vector register)
// and is built with the matching compiler flags.
#include <cstdint>

#include "providers/cpu/microkernels/weighted_rows.h"

#define LANE_ISA WEIGHTED_ROWS_ISA
#define LANE_COUNT WEIGHTED_ROWS_LANES
#include "providers/cpu/microkernels/lane_vector.h"

namespace tandem::cpu::weighted_rows::WEIGHTED_ROWS_ISA {

using namespace tandem::cpu::WEIGHTED_ROWS_ISA::lanes;  // NOLINT: this build's vectors

// Four vectors of outputs held in registers while every tap is added, then one vector,
// then the last n % kLanes outputs one at a time.
void Sum(const float* x, const int64_t* off, const float* w, int64_t taps, int64_t n, float* out) {
  int64_t j = 0;
  for (; j + 4 * kLanes <= n; j += 4 * kLanes) {
    Vec a0{}, a1{}, a2{}, a3{};
    for (int64_t k = 0; k < taps; ++k) {
      const float* row = x + off[k] + j;
      const Vec wk = Splat(w[k]);
      a0 += wk * Load(row);
      a1 += wk * Load(row + kLanes);
      a2 += wk * Load(row + 2 * kLanes);
      a3 += wk * Load(row + 3 * kLanes);
    }
    Store(out + j, a0);
    Store(out + j + kLanes, a1);
    Store(out + j + 2 * kLanes, a2);
    Store(out + j + 3 * kLanes, a3);
  }
  for (; j + kLanes <= n; j += kLanes) {
    Vec a{};
    for (int64_t k = 0; k < taps; ++k) a += Splat(w[k]) * Load(x + off[k] + j);
    Store(out + j, a);
  }
  for (; j < n; ++j) {
    float a = 0.f;
    for (int64_t k = 0; k < taps; ++k) a += w[k] * x[off[k] + j];
    out[j] = a;
  }
}

}  // namespace tandem::cpu::weighted_rows::WEIGHTED_ROWS_ISA
