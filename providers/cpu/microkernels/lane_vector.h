// Float vectors of one instruction set's register width for the microkernels written with
// GCC's vector extensions (softmax_rows_impl.h, add_layer_norm_impl.h, swish_impl.h), and
// exp over them. The including file
// defines LANE_ISA (its build's namespace: baseline, avx2, avx512) and LANE_COUNT (floats
// per register) and is compiled with that ISA's flags; everything here lives in
// tandem::cpu::LANE_ISA::lanes, so the builds never share a definition.
#pragma once
#include <cstdint>
#include <cstring>

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

// exp(x) = 2^n e^r with n = round(x / ln 2), r = x - n ln 2 (ln 2 split in a part exact in
// float and the rest), |r| <= ln 2 / 2, e^r by its Taylor polynomial to r^6 (truncation
// below 2^-23). Below -87.3 (past float's normal range) 0; above 88 exp(88); NaN stays NaN.
inline Vec Exp(Vec x) {
  const Vec lo = Splat(-87.3f), hi = Splat(88.f);
  Vec xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
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
  Vec y = p * reinterpret_cast<const Vec&>(bits);
  y = x < lo ? Vec{} : y;
  return x != x ? x : y;
}

}  // namespace tandem::cpu::LANE_ISA::lanes
