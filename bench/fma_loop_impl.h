// The FMA loop's body for one vector width: included by fma_loop_avx512.cc and
// fma_loop_avx2.cc with FMA_LOOP_LANES set, each compiled for its ISA (cmake/library.cmake),
// where GCC turns `a * m + c` on these vectors into one FMA.
#pragma once
#include "bench/fma_loop_chains.h"

namespace tandem::bench {
namespace {

typedef float Vec __attribute__((vector_size(FMA_LOOP_LANES * sizeof(float))));

// kChains independent chains on registers; returns a value built from all of them so that
// none is optimized away. The multiplier and addend are read through volatiles: each chain
// is a fixed point of x * m + c in float32, which the compiler would otherwise find and fold
// the loop away.
template <int kChains>
float FmaLoopChains(long iterations) {
  volatile float mult = 0.9999999f, addend = 1e-7f;
  const Vec m = Vec{} + mult, c = Vec{} + addend;
  Vec a[kChains];
  for (int i = 0; i < kChains; ++i) a[i] = Vec{} + (1.0f + 1e-3f * i);
  for (long k = 0; k < iterations; ++k) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i) a[i] = a[i] * m + c;
  }
  for (int i = 1; i < kChains; ++i) a[0] += a[i];
  return a[0][0];
}

}  // namespace
}  // namespace tandem::bench
