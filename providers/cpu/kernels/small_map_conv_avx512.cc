// small_map_conv.h's tile loops built with AVX-512F + FMA (CMakeLists.txt sets the flags
// for this file). Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#include <algorithm>

#include "providers/cpu/kernels/small_map_conv_tiles.h"

namespace tandem::cpu::small_map {
namespace {

typedef float Vec __attribute__((vector_size(64), may_alias));
constexpr int kVectors = 4;      // a panel's 64 channels
constexpr int kMaxRowTile = 7;   // output pixels of a row in one tile: 28 accumulators
constexpr int64_t kChunk = 128;  // input channels per chunk: 32 KiB of a panel, within L1

// acc[p][64] += sum over nic channels of x[p * x_step + ic] * wt[ic][64] for NP pixels;
// one cache line of `prefetch` per channel (null: none).
template <int NP>
void RowTile(const float* x, int64_t x_step, const float* wt, int64_t nic, const float* prefetch, float* acc) {
  Vec a[NP][kVectors];
  for (int p = 0; p < NP; ++p)
    for (int v = 0; v < kVectors; ++v) a[p][v] = reinterpret_cast<const Vec*>(acc)[p * kVectors + v];
  for (int64_t ic = 0; ic < nic; ++ic) {
    const Vec* b = reinterpret_cast<const Vec*>(wt + ic * 64);  // aligned: PackedWeights
    if (prefetch) __builtin_prefetch(prefetch + ic * 16, 0, 2);
    const Vec b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
    for (int p = 0; p < NP; ++p) {
      const Vec xv = Vec{} + x[p * x_step + ic];
      a[p][0] += xv * b0;
      a[p][1] += xv * b1;
      a[p][2] += xv * b2;
      a[p][3] += xv * b3;
    }
  }
  for (int p = 0; p < NP; ++p)
    for (int v = 0; v < kVectors; ++v) reinterpret_cast<Vec*>(acc)[p * kVectors + v] = a[p][v];
}

void RowTileN(int np, const float* x, int64_t x_step, const float* wt, int64_t nic, const float* prefetch,
              float* acc) {
  switch (np) {
    case 1: return RowTile<1>(x, x_step, wt, nic, prefetch, acc);
    case 2: return RowTile<2>(x, x_step, wt, nic, prefetch, acc);
    case 3: return RowTile<3>(x, x_step, wt, nic, prefetch, acc);
    case 4: return RowTile<4>(x, x_step, wt, nic, prefetch, acc);
    case 5: return RowTile<5>(x, x_step, wt, nic, prefetch, acc);
    case 6: return RowTile<6>(x, x_step, wt, nic, prefetch, acc);
    default: return RowTile<7>(x, x_step, wt, nic, prefetch, acc);
  }
}

}  // namespace

void AccumulatePanelAvx512(const float* x, int64_t c, int64_t h, int64_t w, int64_t stride, const float* panel,
                           const float* prefetch_end, float* acc) {
  const int64_t oh = (h - 1) / stride + 1, ow = (w - 1) / stride + 1;
  for (int64_t kh = 0; kh < 3; ++kh)
    for (int64_t kw = 0; kw < 3; ++kw) {
      // Output rows and columns whose input pixel (o * stride + k - 1) is inside the image.
      const int64_t y0 = kh == 0 ? 1 : 0, y1 = std::min(oh, (h - kh) / stride + 1);
      const int64_t x0 = kw == 0 ? 1 : 0, x1 = std::min(ow, (w - kw) / stride + 1);
      const float* tap = panel + (kh * 3 + kw) * c * 64;
      for (int64_t ic0 = 0; ic0 < c; ic0 += kChunk) {
        const int64_t nic = std::min(kChunk, c - ic0);
        const float* chunk = tap + ic0 * 64;
        // The next chunk (nic * 64 floats) is fetched a quarter per tile over the first 4 tiles.
        const float* next = chunk + nic * 64;
        int tile = 0;
        for (int64_t oy = y0; oy < y1; ++oy)
          for (int64_t ox = x0; ox < x1; ox += kMaxRowTile, ++tile) {
            const float* prefetch = tile < 4 ? next + tile * nic * 16 : nullptr;
            if (prefetch && prefetch + nic * 16 > prefetch_end) prefetch = nullptr;
            const int np = static_cast<int>(std::min<int64_t>(kMaxRowTile, x1 - ox));
            const float* xp = x + ((oy * stride + kh - 1) * w + (ox * stride + kw - 1)) * c + ic0;
            RowTileN(np, xp, stride * c, chunk, nic, prefetch, acc + (oy * ow + ox) * 64);
          }
      }
    }
}

}  // namespace tandem::cpu::small_map
#endif
