// max_pool_channels_last.h's per-pixel loop for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define POOL_ISA baseline
#define POOL_LANES 4
#include "providers/cpu/microkernels/max_pool_channels_last_impl.h"

namespace tandem::cpu::pool_cl {
extern const Kernels kBaselineKernels = {"baseline", baseline::Pixel};
}  // namespace tandem::cpu::pool_cl
