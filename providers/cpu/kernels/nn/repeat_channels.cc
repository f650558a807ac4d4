#include "providers/cpu/kernels/nn/repeat_channels.h"

#include <algorithm>

#include "providers/cpu/channel_block.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {

void RepeatChannels(const float* x, float* out, int64_t N, int64_t C, int64_t pixels, int64_t m, int block) {
  const bool parallel = N * C * m * pixels >= (int64_t{1} << 15);
  if (block == 0) {  // planes: each input plane copied m times
    ParallelForIf(parallel, N * C * m, [&](int64_t plane) {
      const float* from = x + plane / m * pixels;
      std::copy(from, from + pixels, out + plane * pixels);
    });
  } else if (block == kChannelsLast) {  // pixels of C values: each value m times in a row
    ParallelBlocks(
        N * pixels,
        [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const float* from = x + p * C;
            float* to = out + p * C * m;
            for (int64_t c = 0; c < C; ++c)
              for (int64_t j = 0; j < m; ++j) to[c * m + j] = from[c];
          }
        },
        C * m);
  } else {  // [N, C/B, pixels, B] -> [N, C*m/B, pixels, B]
    const int64_t B = block, in_blocks = C / B, out_blocks = C * m / B;
    ParallelForIf(parallel, N * out_blocks, [&](int64_t task) {
      const int64_t n = task / out_blocks, ob = task % out_blocks;
      const float* image = x + n * in_blocks * pixels * B;
      int64_t from[64];  // lane l's source in the image, at pixel 0 (B <= 64)
      for (int64_t l = 0; l < B; ++l) {
        const int64_t c = (ob * B + l) / m;
        from[l] = c / B * pixels * B + c % B;
      }
      float* to = out + task * pixels * B;
      for (int64_t p = 0; p < pixels; ++p)
        for (int64_t l = 0; l < B; ++l) to[p * B + l] = image[from[l] + p * B];
    });
  }
}

const Tensor& RepeatedChannels::Of(const Tensor& x, int64_t m, int block) {
  Dims logical = x.dims();
  logical[1] *= m;
  if (view_.dims() != logical) {
    stored_ = Tensor::Host(DataType::kFloat, block ? BlockedDims(logical, block) : logical);
    view_ = stored_.Reshaped(logical);
  }
  const int64_t pixels = DimProduct(x.dims(), 2, x.rank());
  RepeatChannels(x.data<float>(), view_.data<float>(), x.dim(0), x.dim(1), pixels, m, block);
  return view_;
}

}  // namespace tandem::cpu
