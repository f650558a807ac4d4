// The float32 rate of the CPU's fused multiply-adds with nothing else in the way: every
// OpenMP thread runs independent FMA chains on registers (no loads, no stores). A benchmark
// times it in the same turns as a kernel, so that "kernel GFLOP/s / FMA loop GFLOP/s" says
// how much arithmetic headroom the kernel leaves on this machine at this moment (a shared
// guest's speed drifts; a fixed peak from the CPU's data sheet would not).
#pragma once

namespace tandem::bench {

// The vector width the loop runs at: 512 (AVX-512F), 256 (AVX2 + FMA) or 0 (neither, or
// capped below AVX2 by ONEDNN_MAX_CPU_ISA, as oneDNN is: providers/cpu/cpu_isa.h).
int FmaLoopBits();

// GFLOP/s of one run of `iterations` steps on every OpenMP thread (each step 16 AVX-512 or
// 12 AVX2 FMAs per thread, 2 flops per lane). 0 where FmaLoopBits() is 0.
double FmaLoopGflops(long iterations);

}  // namespace tandem::bench
