// row_sums.h's loops built for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define ROW_SUMS_ISA baseline
#include "providers/cpu/microkernels/row_sums_impl.h"

namespace tandem::cpu::row_sums {
extern const Kernels kBaselineKernels = {"baseline", baseline::SumRows, baseline::SumColumns};
}  // namespace tandem::cpu::row_sums
