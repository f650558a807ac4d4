// swish.h's loop for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define SWISH_ISA baseline
#define SWISH_LANES 4
#include "providers/cpu/microkernels/swish_impl.h"

namespace tandem::cpu::swish {
extern const Kernels kBaselineKernels = {"baseline", baseline::Run, baseline::RunAddingColumns};
}  // namespace tandem::cpu::swish
