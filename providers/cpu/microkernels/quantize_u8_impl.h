// quantize_u8.h's loops, compiled once per instruction set: the including file defines
// QUANTIZE_U8_ISA (the namespace) and is built with the matching compiler flags.
#include <cstdint>

#include "providers/cpu/microkernels/quantize_u8.h"

namespace tandem::cpu::quantize_u8::QUANTIZE_U8_ISA {

inline void Range(const float* x, int64_t n, float* lo, float* hi) {
  float mn = 0.f, mx = 0.f;
#pragma omp simd reduction(min : mn) reduction(max : mx)
  for (int64_t i = 0; i < n; ++i) {
    mn = x[i] < mn ? x[i] : mn;
    mx = x[i] > mx ? x[i] : mx;
  }
  *lo = mn;
  *hi = mx;
}

inline void Quantize(const float* x, int64_t n, float scale, float zero_point, uint8_t* y) {
  // Rounded half to even by adding and taking away 1.5 * 2^23 (std::nearbyint is a libm call
  // per element at the SSE2 baseline), the zero point added, saturated (NaN fails both
  // tests: 0); through int32 256 at a time, so that both loops vectorize.
  int32_t q[256];
  for (int64_t b = 0; b < n; b += 256) {
    const int64_t m = n - b < 256 ? n - b : 256;  // no std:: template: each build keeps its own code
    const float* src = x + b;
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) {
      const float v = ((src[i] / scale + 12582912.f) - 12582912.f) + zero_point;
      const float low = v > 0.f ? v : 0.f;
      q[i] = static_cast<int32_t>(low < 255.f ? low : 255.f);
    }
    uint8_t* dst = y + b;
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) dst[i] = static_cast<uint8_t>(q[i]);
  }
}

}  // namespace tandem::cpu::quantize_u8::QUANTIZE_U8_ISA
