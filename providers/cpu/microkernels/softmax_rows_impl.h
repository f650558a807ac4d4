// The row loops of softmax_rows.h, compiled once per instruction set: the including file
// defines SOFTMAX_ISA (the namespace) and SOFTMAX_LANES (floats per vector register) and
// is built with the matching compiler flags. GCC's vector extension types map onto that
// ISA's registers.
#include <cstdint>
#include <cstring>
#include <limits>

#include "providers/cpu/microkernels/softmax_rows.h"

#define LANE_ISA SOFTMAX_ISA
#define LANE_COUNT SOFTMAX_LANES
#include "providers/cpu/microkernels/lane_vector.h"

namespace tandem::cpu::softmax_rows::SOFTMAX_ISA {

using namespace tandem::cpu::SOFTMAX_ISA::lanes;  // NOLINT: this build's vectors

template <bool kMask>
float ExpRow(float* p, int64_t n, float scale, const float* m) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  // x = s * scale + mask, in place, and its maximum.
  const Vec vs = Splat(scale);
  Vec vmax = Splat(kNegInf);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Vec x = Load(p + j) * vs;
    if constexpr (kMask) x += Load(m + j);
    Store(p + j, x);
    vmax = x > vmax ? x : vmax;
  }
  float mx = LaneMax(vmax);
  for (int64_t t = j; t < n; ++t) {
    float x = p[t] * scale;
    if constexpr (kMask) x += m[t];
    p[t] = x;
    mx = x > mx ? x : mx;
  }
  // exp(x - max) and the sum; the tail padded with -inf (exp 0).
  const Vec vm = Splat(mx);
  Vec sum{};
  for (j = 0; j + kLanes <= n; j += kLanes) {
    const Vec e = Exp(Load(p + j) - vm);
    Store(p + j, e);
    sum += e;
  }
  if (j < n) {
    float tail[kLanes];
    for (int t = 0; t < kLanes; ++t) tail[t] = j + t < n ? p[j + t] : kNegInf;
    const Vec e = Exp(Load(tail) - vm);
    Store(tail, e);
    std::memcpy(p + j, tail, static_cast<size_t>(n - j) * sizeof(float));
    sum += e;
  }
  return LaneSum(sum);
}

inline void ExpRows(float* s, int64_t rows, int64_t n, int64_t ld, float scale, const float* mask, int64_t mask_ld,
                    float* sums) {
  for (int64_t i = 0; i < rows; ++i)
    sums[i] = mask ? ExpRow<true>(s + i * ld, n, scale, mask + i * mask_ld)
                   : ExpRow<false>(s + i * ld, n, scale, nullptr);
}

}  // namespace tandem::cpu::softmax_rows::SOFTMAX_ISA
