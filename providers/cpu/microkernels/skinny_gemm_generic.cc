// skinny_gemm.h's panel loops for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define SKINNY_ISA baseline
#define SKINNY_LANES 4
#include "providers/cpu/microkernels/skinny_gemm_impl.h"

namespace tandem::cpu::skinny {
extern const Kernels kBaselineKernels = {"baseline", baseline::kPanel, baseline::PanelProduct};
}  // namespace tandem::cpu::skinny
