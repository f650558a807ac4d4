// The FMA loop's body (fma_loop.h), built once per vector width by fma_loop_avx512.cc and
// fma_loop_avx2.cc, each compiled for its ISA.
#pragma once

namespace tandem::bench {

// Runs W::kChains independent FMA chains on registers for `iterations` steps; returns a
// value built from all of them so that none is optimized away. W gives the vector type V and
// Set (broadcast), Fma, Add and First (lane 0).
template <typename W>
float FmaChains(long iterations) {
  const typename W::V m = W::Set(0.9999999f), c = W::Set(1e-7f);
  typename W::V a[W::kChains];
  for (int i = 0; i < W::kChains; ++i) a[i] = W::Set(1.0f + 1e-3f * i);
  for (long k = 0; k < iterations; ++k) {
#pragma GCC unroll 16
    for (int i = 0; i < W::kChains; ++i) a[i] = W::Fma(a[i], m, c);
  }
  for (int i = 1; i < W::kChains; ++i) a[0] = W::Add(a[0], a[i]);
  return W::First(a[0]);
}

// The two builds: 16 chains of AVX-512 FMAs, 12 of AVX2 FMAs (AVX2 has 16 vector registers,
// two of which hold the constants). Call each only where its ISA may run.
inline constexpr int kFmaChains512 = 16, kFmaChains256 = 12;
float FmaChains512(long iterations);
float FmaChains256(long iterations);

}  // namespace tandem::bench
