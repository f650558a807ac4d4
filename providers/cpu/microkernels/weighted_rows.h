// The inner loop of RoiAlign's float path (kernels/nn/roi_align.cc): one output bin's
// channels as a weighted sum of a few channels-last pixels (a bin's bilinear samples, four
// corners each), out[j] = sum_k w[k] * x[off[k] + j] for j < n, in float. Built for the
// baseline x86-64 instruction set, AVX2 and AVX-512 (weighted_rows_impl.h), chosen under
// ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::weighted_rows {

struct Kernels {
  const char* isa;
  // out[0, n) = sum over k < taps of w[k] * x[off[k], off[k] + n), summed in tap order.
  void (*sum)(const float* x, const int64_t* off, const float* w, int64_t taps, int64_t n, float* out);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

}  // namespace tandem::cpu::weighted_rows
