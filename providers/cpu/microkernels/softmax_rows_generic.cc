// softmax_rows.h's row loops for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define SOFTMAX_ISA baseline
#define SOFTMAX_LANES 4
#include "providers/cpu/microkernels/softmax_rows_impl.h"

namespace tandem::cpu::softmax_rows {
extern const Kernels kBaselineKernels = {"baseline", baseline::ExpRows, baseline::ColumnSoftmax};
}  // namespace tandem::cpu::softmax_rows
