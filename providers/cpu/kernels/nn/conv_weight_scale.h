// Weights of a convolution whose input channels are scaled first (FusedConv's Scale, a
// squeeze-and-excitation gate): Conv(X * s, W) = Conv(X, W'), W'[o, c, ...] = W[o, c, ...] s[c].
#pragma once
#include <cstdint>

#include <dnnl.hpp>

namespace tandem::cpu {

// B when `packed` is oneDNN's layout with the output channels innermost in blocks of B
// ([O/B][kh][kw][C][B], tags Acdb16a/32a/48a/64a, what its 1x1 kernels read) for 2-D
// weights of `dims` [O, C, kh, kw]; else 0.
int OutputInnerBlock(const dnnl::memory::desc& packed, const dnnl::memory::dims& dims);

// out = W * s with W plain [O, C, taps] (taps = kh * kw).
void ScalePlainWeights(const float* w, const float* s, int64_t O, int64_t C, int64_t taps, float* out);

// out = W * s with W packed as OutputInnerBlock's layout: `o_blocks` blocks of B output
// channels (the last padded with zeros, which stay zero), each [taps][C][B].
void ScaleInnerBlockedWeights(const float* w, const float* s, int64_t o_blocks, int64_t C, int64_t taps, int B,
                              float* out);

}  // namespace tandem::cpu
