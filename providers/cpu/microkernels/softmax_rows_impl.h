// The row loops of softmax_rows.h, compiled once per instruction set: the including file
// defines SOFTMAX_ISA (the namespace) and SOFTMAX_LANES (floats per vector register) and
// is built with the matching compiler flags. GCC's vector extension types map onto that
// ISA's registers.
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

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

// Softmax over the n rows of one vector of columns, rows `ld` apart.
inline void ColumnVector(const float* x, float* y, int64_t n, int64_t ld) {
  Vec m = Load(x);
  for (int64_t k = 1; k < n; ++k) {
    const Vec v = Load(x + k * ld);
    m = v > m ? v : m;
  }
  Vec sum{};
  for (int64_t k = 0; k < n; ++k) {
    const Vec e = Exp(Load(x + k * ld) - m);
    Store(y + k * ld, e);
    sum += e;
  }
  const Vec inv = Splat(1.f) / sum;
  for (int64_t k = 0; k < n; ++k) Store(y + k * ld, Load(y + k * ld) * inv);
}

inline void ColumnSoftmax(const float* x, float* y, int64_t n, int64_t inner, int64_t c0, int64_t c1) {
  int64_t c = c0;
  for (; c + kLanes <= c1; c += kLanes) ColumnVector(x + c, y + c, n, inner);
  if (c == c1) return;
  // The last columns, fewer than a vector: through a copy padded with zeros.
  std::vector<float> in(static_cast<size_t>(n * kLanes), 0.f), out(in.size());
  const int64_t left = c1 - c;
  for (int64_t k = 0; k < n; ++k) std::memcpy(&in[k * kLanes], x + k * inner + c, sizeof(float) * left);
  ColumnVector(in.data(), out.data(), n, kLanes);
  for (int64_t k = 0; k < n; ++k) std::memcpy(y + k * inner + c, &out[k * kLanes], sizeof(float) * left);
}

}  // namespace tandem::cpu::softmax_rows::SOFTMAX_ISA
