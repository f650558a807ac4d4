#include "providers/cpu/microkernels/max_pool_channels_last.h"

#include <algorithm>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::pool_cl {

extern const Kernels kBaselineKernels, kAvx2Kernels, kAvx512Kernels;  // one per build (isa_dispatch.h)

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

bool WindowsHitTheImage(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, const Window2d& w) {
  // The first window ends past the begin padding and the last one starts inside the image.
  auto hits = [](int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
    return out == 0 || (k > p && (out - 1) * s - p < in);
  };
  return hits(in_h, out_h, w.kh, w.sh, w.ph) && hits(in_w, out_w, w.kw, w.sw, w.pw);
}

void MaxPool(const Kernels& kernels, const float* x, float* y, int64_t N, int64_t C, int64_t H, int64_t W,
             int64_t OH, int64_t OW, const Window2d& w, int64_t in_block) {
  const int64_t B = in_block, blocks = C / B;
#pragma omp parallel for collapse(2) schedule(static) if (N * OH * OW * C >= (1 << 14))
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t h0 = std::max<int64_t>(0, oh * w.sh - w.ph), h1 = std::min(H, oh * w.sh - w.ph + w.kh);
      const float* image = x + n * H * W * C;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t w0 = std::max<int64_t>(0, ow * w.sw - w.pw), w1 = std::min(W, ow * w.sw - w.pw + w.kw);
        // Block b is a channels-last image of B channels: channels b*B.. of every pixel.
        kernels.pixel(image, W, B, blocks, H * W * B, h0, h1, w0, w1, y + ((n * OH + oh) * OW + ow) * C);
      }
    }
}

}  // namespace tandem::cpu::pool_cl
