// The rows of a residual Add followed by LayerNormalization over the last axis
// (kernels/nn/add_layer_norm.cc): s = a + b, then y = (s - mean(s)) / sqrt(var(s) + eps) *
// gamma [+ beta], one row of n in cache at a time, s also stored when asked (a pre-norm
// transformer's residual stream reads it). Mean and variance in float, two passes over
// the row (the variance of s - mean, as oneDNN's layer normalization computes it). Built
// for the baseline x86-64 instruction set, AVX2 and AVX-512 (add_layer_norm_impl.h),
// chosen under ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::add_layer_norm {

struct Kernels {
  const char* isa;
  // Rows [0, rows) of n floats: a, b, y and sum (may be null) row i at i * n; gamma and beta
  // (may be null) of n.
  void (*rows)(const float* a, const float* b, const float* gamma, const float* beta, float epsilon, int64_t n,
               int64_t rows, float* y, float* sum);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

}  // namespace tandem::cpu::add_layer_norm
