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

inline void AddU8(const uint8_t* a, const uint8_t* b, int64_t n, const AddParams& p, uint8_t* y) {
  // Each product rounded to float before the sum, as the unfused nodes do: the terms go
  // through memory, so that no build contracts a product and the sum into one FMA.
  float fa[256], fb[256];
  for (int64_t b0 = 0; b0 < n; b0 += 256) {
    const int64_t m = n - b0 < 256 ? n - b0 : 256;
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) fa[i] = (static_cast<float>(a[b0 + i]) - p.a_zero) * p.a_scale;
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) fb[i] = (static_cast<float>(b[b0 + i]) - p.b_zero) * p.b_scale;
#pragma omp simd
    for (int64_t i = 0; i < m; ++i) fa[i] += fb[i];
    Quantize(fa, m, p.c_scale, p.c_zero, y + b0);
  }
}

}  // namespace tandem::cpu::quantize_u8::QUANTIZE_U8_ISA
