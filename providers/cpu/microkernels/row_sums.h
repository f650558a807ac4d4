// Sums over contiguous float32 rows for the Reduce kernels (kernels/math/reduce.cc): of x,
// of x² and of |x| — ReduceSum and ReduceMean, ReduceSumSquare and ReduceL2, ReduceL1 over
// the innermost axes (XCA attention's L2 normalization of q and k over the tokens, means over
// H and W). Each row is added in blocks of 256 elements, within a block in 16 float lanes
// (what a vector register holds; the compiler vectorizes the lanes), the blocks' sums in
// double, so a long row keeps near double's accuracy while the work stays in float vectors.
// And the column sums of such rows, for axes with kept ones inside them (a mean over the
// tokens of [batch, tokens, channels]): the columns in float lanes, blocks of 256 rows, the
// blocks' sums in double.
// Built for the baseline x86-64 instruction set, AVX2 and AVX-512 (row_sums_impl.h), chosen
// under ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::row_sums {

enum class Term { kValue, kSquare, kAbsolute };

struct Kernels {
  const char* isa;
  // out[r] = the sum over j < n of term(x[r * n + j]), for r < rows.
  void (*sum_rows)(const float* x, int64_t rows, int64_t n, Term term, double* out);
  // out[j] = the sum over r < rows of term(x[r * stride + j]), for j < n.
  void (*sum_columns)(const float* x, int64_t rows, int64_t n, int64_t stride, Term term, double* out);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

}  // namespace tandem::cpu::row_sums
