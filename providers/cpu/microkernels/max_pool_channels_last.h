// 2-D max pooling of a channels-last float tensor [N, H, W, C], or of one in channel
// blocks [N, C/B, H, W, B] (any window, stride and padding; dilation 1), into
// channels-last [N, OH, OW, C], for MaxPool on the CPU provider's channels-last layout
// (pool.cc) — the blocked input where a network's first convolution wrote its image in
// oneDNN's blocks (blocked_layout.h). Each output pixel is the element-wise max of
// the C-vectors of its window's pixels inside the image, so every load and store runs
// along contiguous channels. The per-pixel loop is built for the baseline x86-64
// instruction set, AVX2 and AVX-512 (max_pool_channels_last_impl.h), chosen under
// ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h). On 2 Sapphire Rapids cores
// the AVX-512 build pools squeezenet1_1's 111x111x64 map faster than oneDNN 2.6's nhwc
// pooling.
#pragma once
#include <cstdint>
#include <vector>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::pool_cl {

struct Window2d {
  int64_t kh, kw, sh, sw, ph, pw;  // window, stride, begin padding
};

// Whether every one of the out_h x out_w windows holds at least one pixel of the image.
bool WindowsHitTheImage(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, const Window2d& w);

struct Kernels {
  const char* isa;
  // out[b*B + c] = max over rows [h0, h1) and columns [w0, w1) (non-empty) of
  // image[b*block_stride + (h*W + w)*B + c], for b < blocks and c < B: `blocks` channels-last
  // images of B channels each, block_stride floats apart.
  void (*pixel)(const float* image, int64_t W, int64_t B, int64_t blocks, int64_t block_stride, int64_t h0,
                int64_t h1, int64_t w0, int64_t w1, float* out);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

// x [N, C/B, H, W, B] -> y [N, OH, OW, C] with `kernels`, B = in_block dividing C (C
// itself: x is channels-last [N, H, W, C]); requires WindowsHitTheImage.
void MaxPool(const Kernels& kernels, const float* x, float* y, int64_t N, int64_t C, int64_t H, int64_t W,
             int64_t OH, int64_t OW, const Window2d& w, int64_t in_block);

}  // namespace tandem::cpu::pool_cl
