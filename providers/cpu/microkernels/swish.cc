#include "providers/cpu/microkernels/swish.h"

#include <algorithm>

#include "providers/cpu/channel_reduction.h"
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

void SwishInPlaceWithMeans(float* p, int64_t outer, int64_t S, int64_t B, float alpha, float* means, int threads) {
  const Kernels& k = Builds().best();
  ReduceChannelBlocks(
      outer, S, B, B, threads, means,
      [&](int64_t o, int64_t, int64_t, int64_t s0, int64_t len, float* sums) {
        std::fill(sums, sums + B, 0.f);
        k.run_adding_columns(p + (o * S + s0) * B, len, B, alpha, sums);
      },
      [](float a, float b) { return a + b; }, [](float v, int64_t S) { return v / static_cast<float>(S); });
}

}  // namespace tandem::cpu::swish
