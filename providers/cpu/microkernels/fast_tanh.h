// Float32 tanh over an array, written so the compiler vectorizes it (no libm call per
// element: libm's tanhf costs ~20 ns, more than the 3x100 matrix product it follows in
// the neural-ODE MLP). Within 3 ulp of the exact result (tests/fast_tanh_test.cc checks
// it against float64 tanh); NaN stays NaN and +-inf gives +-1.
//   |x| < 0.625:  x + x^3 P(x^2)            (P least-squares fitted to tanh's series rest)
//   otherwise:    1 - 2 / (exp(2|x|) + 1)   (exp by 2^n * e^r, |r| <= ln2/2, polynomial)
// with the sign of x restored; |x| is capped at 10 (tanh rounds to 1 in float from 9.01).
// A file built for another instruction set (tanh_arrays_avx2.cc, ...) defines
// TANDEM_FAST_TANH_NAMESPACE before including this, so its copies of these inline
// functions have names of their own and never stand in for the baseline build's.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef TANDEM_FAST_TANH_NAMESPACE
#define TANDEM_FAST_TANH_NAMESPACE fast_tanh_baseline
#endif

namespace tandem::cpu {
inline namespace TANDEM_FAST_TANH_NAMESPACE {

// c ? a : b by bit masks: GCC does not if-convert a float select next to a division
// under its default -ftrapping-math, which left every loop here scalar.
inline float SelectBits(bool c, float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  const int32_t mask = -static_cast<int32_t>(c);
  const int32_t r = (ia & mask) | (ib & ~mask);
  float out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

inline float TanhOne(float x) {
  // |x| capped at 10 by a compare, not std::fmin (a libm call at the SSE2 baseline);
  // NaN < 10 is false, so NaN gives 10 here and is restored below.
  const float abs_x = std::fabs(x);
  const float a = SelectBits(abs_x < 10.f, abs_x, 10.f);
  // Small |x|: odd polynomial.
  const float z = a * a;
  const float p = (((-0.005718891551633303f * z + 0.020653063940614214f) * z - 0.053744640348560836f) * z +
                   0.13331512468567755f) * z - 0.33333285212936004f;
  const float small = a + a * z * p;
  // Large |x|: e = exp(2a) = 2^n e^r.
  const float y = 2.f * a;
  // Rounded by truncation (y >= 0): the SSE2 baseline vectorizes a float -> int
  // conversion, while std::floor is a libm call per element there.
  const float n = static_cast<float>(static_cast<int32_t>(y * 1.44269504088896341f + 0.5f));
  const float r = (y - n * 0.693145751953125f) - n * 1.428606765330187e-06f;  // ln2 split hi + lo
  const float q = (((0.0013751408181298247f * r + 0.008368919080973009f) * r + 0.04166953339547566f) * r +
                   0.1666651843720962f) * r + 0.49999988592958855f;
  const float er = 1.f + r + r * r * q;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n, n in [0, 29]
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const float large = 1.f - 2.f / (er * scale + 1.f);
  const float t = SelectBits(a < 0.625f, small, large);
  return SelectBits(x != x, x, std::copysign(t, x));
}

inline void TanhInto(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = TanhOne(x[i]);
}

// GELU's tanh form, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), in one pass with the
// tanh above: the arithmetic of the nodes exporters write for it (GPT-2's "gelu_new").
// `y` may be `x`.
inline void GeluTanhInto(const float* x, float* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.f + TanhOne(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

}  // namespace TANDEM_FAST_TANH_NAMESPACE
}  // namespace tandem::cpu
