// The FMA loop's builds (fma_loop.h): fma_loop_avx512.cc and fma_loop_avx2.cc each include
// fma_loop_impl.h compiled for their ISA. Call each only where its ISA may run.
#pragma once

namespace tandem::bench {

// 16 chains of AVX-512 FMAs (more than the FMA latency times two ports), 12 of AVX2 FMAs
// (AVX2 has 16 vector registers, two of which hold the constants).
inline constexpr int kFmaChains512 = 16, kFmaChains256 = 12;
// Runs the chains for `iterations` steps; returns a value built from all of them.
float FmaChains512(long iterations);
float FmaChains256(long iterations);

}  // namespace tandem::bench
