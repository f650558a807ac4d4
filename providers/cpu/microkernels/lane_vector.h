// Float vectors of one instruction set's register width for the microkernels written with
// GCC's vector extensions (softmax_rows_impl.h, add_layer_norm_impl.h, swish_impl.h), and
// exp over them. The including file
// defines LANE_ISA (its build's namespace: baseline, avx2, avx512) and LANE_COUNT (floats
// per register) and is compiled with that ISA's flags; everything here lives in
// tandem::cpu::LANE_ISA::lanes, so the builds never share a definition.
#pragma once
#include <cstdint>
#include <cstring>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tandem::cpu::LANE_ISA::lanes {

constexpr int kLanes = LANE_COUNT;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float)), may_alias));
typedef int32_t IVec __attribute__((vector_size(kLanes * sizeof(int32_t)), may_alias));

inline Vec Splat(float v) { return Vec{} + v; }
inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

inline float LaneMax(Vec v) {
  float l[kLanes];
  std::memcpy(l, &v, sizeof l);
  float m = l[0];
  for (int i = 1; i < kLanes; ++i) m = l[i] > m ? l[i] : m;
  return m;
}
inline float LaneSum(Vec v) {
  float l[kLanes];
  std::memcpy(l, &v, sizeof l);
  float s = 0.f;
  for (int i = 0; i < kLanes; ++i) s += l[i];
  return s;
}

// exp(x) for x <= 88 (or NaN) = 2^n e^r with n = round(x / ln 2), r = x - n ln 2 (ln 2
// split in a part exact in float and the rest), |r| <= ln 2 / 2, e^r by its Taylor
// polynomial to r^6 (truncation below 2^-23). Below -87.3 (past float's normal range) 0;
// NaN stays NaN. For arguments known not to be above 88 (x - max in softmax, -|z| in
// sigmoid): Exp without its overflow clamp.
inline Vec ExpUpTo88(Vec x) {
  const Vec lo = Splat(-87.3f);
  const Vec xc = lo > x ? lo : x;  // NaN passes through
  const Vec magic = Splat(12582912.f);  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const Vec n = (xc * Splat(1.44269504088896341f) + magic) - magic;
  const Vec r = (xc - n * Splat(0.693145751953125f)) - n * Splat(1.428606765330187e-06f);
  Vec p = Splat(1.f / 720.f);
  p = p * r + Splat(1.f / 120.f);
  p = p * r + Splat(1.f / 24.f);
  p = p * r + Splat(1.f / 6.f);
  p = p * r + Splat(0.5f);
  p = p * r + Splat(1.f);
  p = p * r + Splat(1.f);
  const IVec bits = (__builtin_convertvector(n, IVec) + 127) << 23;
  const Vec y = p * reinterpret_cast<const Vec&>(bits);  // NaN for a NaN x (p is)
  return x < lo ? Vec{} : y;
}

// exp(x) as ExpUpTo88, and exp(88) above 88.
inline Vec Exp(Vec x) {
  const Vec hi = Splat(88.f);
  return ExpUpTo88(x > hi ? hi : x);
}

// num / den for den in [1, 2] (1 + e in a sigmoid), within about an ulp: the instruction
// set's reciprocal estimate of den (AVX-512 14 bits; AVX and SSE 12 bits, refined by one
// Newton step), the quotient num * (1 / den) refined by one Newton step. A 512-bit division
// takes one register per ~10 cycles, more than the rest of a sigmoid.
inline Vec DivideByOneToTwo(Vec num, Vec den) {
#if LANE_COUNT == 16 && defined(__AVX512F__)
  // (the maskz form: GCC 12 warns on the plain one's undefined source register)
  const Vec r = reinterpret_cast<Vec>(_mm512_maskz_rcp14_ps(0xffff, reinterpret_cast<__m512>(den)));
#elif LANE_COUNT == 8 && defined(__AVX__)
  Vec r = reinterpret_cast<Vec>(_mm256_rcp_ps(reinterpret_cast<__m256>(den)));
  r = r + r * (Splat(1.f) - den * r);
#elif LANE_COUNT == 4 && defined(__SSE__)
  Vec r = reinterpret_cast<Vec>(_mm_rcp_ps(reinterpret_cast<__m128>(den)));
  r = r + r * (Splat(1.f) - den * r);
#else
  const Vec r = Splat(1.f) / den;
#endif
  const Vec q = num * r;
  return q + r * (num - den * q);
}

}  // namespace tandem::cpu::LANE_ISA::lanes
