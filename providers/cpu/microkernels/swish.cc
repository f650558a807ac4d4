#include "providers/cpu/microkernels/swish.h"

#include "providers/cpu/kernel_util.h"

namespace tandem::cpu::swish {

extern const Kernels kBaselineKernels, kAvx2Kernels, kAvx512Kernels;  // one per build (isa_dispatch.h)

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

void SwishInPlace(float* p, int64_t n, float alpha) {
  const Kernels& k = Builds().best();
  ParallelBlocks(n, [&](int64_t begin, int64_t end) { k.run(p + begin, end - begin, alpha); });
}

}  // namespace tandem::cpu::swish
