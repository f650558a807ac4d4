// weighted_rows.h's loop built for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define WEIGHTED_ROWS_ISA baseline
#define WEIGHTED_ROWS_LANES 4
#include "providers/cpu/microkernels/weighted_rows_impl.h"

namespace tandem::cpu::weighted_rows {
extern const Kernels kBaselineKernels = {"baseline", baseline::Sum};
}  // namespace tandem::cpu::weighted_rows
