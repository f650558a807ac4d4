// Channel-multiplier convolutions (group = C input channels, M = m * C outputs: each input
// channel feeds m outputs, as in FastViT's and MobileOne's stride-2 downsampling) run as
// depthwise convolutions of M groups on X with each channel repeated m times (conv.cc):
// oneDNN's depthwise kernels take one output channel per group only, and with more it falls
// back to a GEMM per group of a few values (~1 ms for FastViT's 7x7 of 48 -> 96 channels).
#pragma once
#include <cstdint>

#include "graph/tensor.h"

namespace tandem::cpu {

// out[n, c * m + j] = x[n, c] for j < m, for float x of N images of C channels of `pixels`
// each, both stored in the layout `block` (channel_block.h: 0 plain, B with C a multiple of
// B, or kChannelsLast), across the OpenMP team for large maps.
void RepeatChannels(const float* x, float* out, int64_t N, int64_t C, int64_t pixels, int64_t m, int block);

// X with each channel repeated m times, in X's layout, in a buffer kept across calls.
class RepeatedChannels {
 public:
  // x: the logical [N, C, spatial...] view of float data stored in `block`'s layout; returns
  // the logical view of [N, C * m, spatial...] in the same layout.
  const Tensor& Of(const Tensor& x, int64_t m, int block);

 private:
  Tensor stored_, view_;
};

}  // namespace tandem::cpu
