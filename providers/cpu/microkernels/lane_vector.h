// Float vectors of one instruction set's register width for the microkernels written with
// GCC's vector extensions (softmax_rows_impl.h, add_layer_norm_impl.h). The including file
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

}  // namespace tandem::cpu::LANE_ISA::lanes
