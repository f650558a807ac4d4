// Softmax loops. The row pass of a fused attention's softmax (kernels/nn/fused_attention.cc): for each of
// `rows` rows of `n` scores, x = s * scale + mask, then s = exp(x - max(x)) in place and
// the row's sum of those exponentials, so the caller divides once per output row instead
// of once per score. exp is a range reduction by ln 2 and a degree-6 polynomial (within 2
// ulp of float64 exp; 0 below -87.3, NaN stays NaN); a row whose maximum is -inf (every
// key masked) or that holds a NaN gets a NaN sum, as ONNX Softmax gives NaN there. And the
// Softmax of an axis that is not the last (kernels/nn/softmax.cc; YOLO's distribution focal
// loss head: 16 values 33,600 apart), a vector of columns at a time (oneDNN 2.6 runs its
// reference loop there), with the same exp; NaN in, NaN out.
// Built for the baseline x86-64 instruction set, AVX2 and AVX-512 (softmax_rows_impl.h),
// chosen under ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::softmax_rows {

struct Kernels {
  const char* isa;
  // Row i is s[i*ld, i*ld + n); mask (may be null) row i is mask[i*mask_ld, i*mask_ld + n)
  // (mask_ld 0: one row for all); sums[i] receives row i's sum.
  void (*exp_rows)(float* s, int64_t rows, int64_t n, int64_t ld, float scale, const float* mask,
                   int64_t mask_ld, float* sums);
  // y = softmax of x [n, inner] over its first axis, for columns [c0, c1) (x and y inner apart).
  void (*column_softmax)(const float* x, float* y, int64_t n, int64_t inner, int64_t c0, int64_t c1);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

}  // namespace tandem::cpu::softmax_rows
