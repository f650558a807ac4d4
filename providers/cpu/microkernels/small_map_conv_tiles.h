// The tile loops of small_map_conv.h, in their own translation unit built with AVX-512F +
// FMA (small_map_conv_avx512.cc); nothing inline crosses into code built for other CPUs.
#pragma once
#include <cstdint>

namespace tandem::cpu::small_map {

constexpr int64_t kMaxPixels = 64;  // output pixels per image this path takes

// One image's taps through one panel: acc[p * 64 + j] += x[input pixel of p and tap][ic] *
// panel[tap][ic][j] for every output pixel p (row-major over oh x ow), every tap inside the
// image and every input channel ic; at most kMaxPixels output pixels. x [h, w, c]
// channels-last; panel [9][c][64]; acc 64-byte aligned. While a chunk of the panel is
// multiplied, the chunk after it (the next panel's first chunk after the last) is
// prefetched into L2, never at or past `prefetch_end`.
void AccumulatePanelAvx512(const float* x, int64_t c, int64_t h, int64_t w, int64_t stride, const float* panel,
                           const float* prefetch_end, float* acc);

}  // namespace tandem::cpu::small_map
