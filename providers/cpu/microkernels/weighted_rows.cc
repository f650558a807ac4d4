#include "providers/cpu/microkernels/weighted_rows.h"

namespace tandem::cpu::weighted_rows {

extern const Kernels kBaselineKernels, kAvx2Kernels, kAvx512Kernels;  // one per build (isa_dispatch.h)

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

}  // namespace tandem::cpu::weighted_rows
