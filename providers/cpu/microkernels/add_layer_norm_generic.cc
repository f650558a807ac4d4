// add_layer_norm.h's rows for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define ADD_LN_ISA baseline
#define ADD_LN_LANES 4
#include "providers/cpu/microkernels/add_layer_norm_impl.h"

namespace tandem::cpu::add_layer_norm {
extern const Kernels kBaselineKernels = {"baseline", baseline::Rows};
}  // namespace tandem::cpu::add_layer_norm
