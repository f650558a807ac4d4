// fast_tanh.h's array loops (tanh, and GELU's tanh form) built for the baseline x86-64
// instruction set, AVX2 and AVX-512 (tanh_arrays_*.cc), the widest one the CPU runs chosen
// under ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h). The baseline build is
// 4 lanes wide and divides with SSE2: GPT-2's GELU over [1024, 1536] took 1.9 ms there and
// ~0.5 ms with AVX-512 on two cores. Results agree with float64 tanh within fast_tanh.h's
// bound in every build (FMA contraction may change the last bit between builds).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::tanh_arrays {

struct Kernels {
  const char* isa;
  void (*tanh)(const float* x, float* y, int64_t n);       // y = tanh(x); y may be x
  void (*gelu_tanh)(const float* x, float* y, int64_t n);  // GELU's tanh form; y may be x
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

// Over [0, n) with the widest build, on the calling thread (callers split the work).
void Tanh(const float* x, float* y, int64_t n);
void GeluTanh(const float* x, float* y, int64_t n);

}  // namespace tandem::cpu::tanh_arrays
