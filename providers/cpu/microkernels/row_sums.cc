#include "providers/cpu/microkernels/row_sums.h"

namespace tandem::cpu::row_sums {

extern const Kernels kBaselineKernels, kAvx2Kernels, kAvx512Kernels;  // one per build (isa_dispatch.h)

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

}  // namespace tandem::cpu::row_sums
