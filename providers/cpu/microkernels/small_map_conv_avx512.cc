// small_map_conv.h's tile loops built with AVX-512F + FMA (CMakeLists.txt sets the flags
// for this file). Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include <algorithm>

#include "providers/cpu/microkernels/small_map_conv_tiles.h"

namespace tandem::cpu::small_map {
namespace {

constexpr int kVectors = 4;      // a panel's 64 channels
constexpr int kMaxTile = 6;      // output pixels in one tile: 24 accumulators + 4 weights + 1 broadcast
constexpr int64_t kChunk = 128;  // input channels per chunk: 32 KiB of a panel, within L1

// acc[p][64] += sum over nic channels of x[p][ic] * wt[ic][64] for NP pixels, each with its
// own input and accumulator address (a tile may span output rows); one cache line of
// `prefetch` per channel (null: none). Each input value is broadcast by a load, not a
// shuffle, so the FMA ports do nothing else.
template <int NP>
void Tile(const float* const* x, float* const* acc, const float* wt, int64_t nic, const float* prefetch) {
  __m512 a[NP][kVectors];
  const float* xp[NP];
  for (int p = 0; p < NP; ++p) {
    xp[p] = x[p];
    for (int v = 0; v < kVectors; ++v) a[p][v] = _mm512_load_ps(acc[p] + v * 16);
  }
  for (int64_t ic = 0; ic < nic; ++ic) {
    const float* b = wt + ic * 64;  // aligned: PackedWeights
    if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(prefetch + ic * 16), _MM_HINT_T1);
    const __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16), b2 = _mm512_load_ps(b + 32),
                 b3 = _mm512_load_ps(b + 48);
    for (int p = 0; p < NP; ++p) {
      const __m512 xv = _mm512_set1_ps(xp[p][ic]);
      a[p][0] = _mm512_fmadd_ps(xv, b0, a[p][0]);
      a[p][1] = _mm512_fmadd_ps(xv, b1, a[p][1]);
      a[p][2] = _mm512_fmadd_ps(xv, b2, a[p][2]);
      a[p][3] = _mm512_fmadd_ps(xv, b3, a[p][3]);
    }
  }
  for (int p = 0; p < NP; ++p)
    for (int v = 0; v < kVectors; ++v) _mm512_store_ps(acc[p] + v * 16, a[p][v]);
}

void TileN(int np, const float* const* x, float* const* acc, const float* wt, int64_t nic, const float* prefetch) {
  switch (np) {
    case 1: return Tile<1>(x, acc, wt, nic, prefetch);
    case 2: return Tile<2>(x, acc, wt, nic, prefetch);
    case 3: return Tile<3>(x, acc, wt, nic, prefetch);
    case 4: return Tile<4>(x, acc, wt, nic, prefetch);
    case 5: return Tile<5>(x, acc, wt, nic, prefetch);
    default: return Tile<6>(x, acc, wt, nic, prefetch);
  }
}

}  // namespace

void AccumulatePanelAvx512(const float* x, int64_t c, int64_t h, int64_t w, int64_t stride, const float* panel,
                           const float* prefetch_end, float* acc) {
  const int64_t oh = (h - 1) / stride + 1, ow = (w - 1) / stride + 1;
  const float* xs[kMaxPixels];
  float* accs[kMaxPixels];
  for (int64_t kh = 0; kh < 3; ++kh)
    for (int64_t kw = 0; kw < 3; ++kw) {
      // The output pixels whose input pixel (o * stride + k - 1) is inside the image, in
      // order, shared out as evenly as tiles of at most kMaxTile allow.
      const int64_t y0 = kh == 0 ? 1 : 0, y1 = std::min(oh, (h - kh) / stride + 1);
      const int64_t x0 = kw == 0 ? 1 : 0, x1 = std::min(ow, (w - kw) / stride + 1);
      int64_t n = 0;
      for (int64_t oy = y0; oy < y1; ++oy)
        for (int64_t ox = x0; ox < x1; ++ox, ++n) {
          xs[n] = x + ((oy * stride + kh - 1) * w + (ox * stride + kw - 1)) * c;
          accs[n] = acc + (oy * ow + ox) * 64;
        }
      const int64_t tiles = (n + kMaxTile - 1) / kMaxTile;
      const float* tap = panel + (kh * 3 + kw) * c * 64;
      for (int64_t ic0 = 0; ic0 < c; ic0 += kChunk) {
        const int64_t nic = std::min(kChunk, c - ic0);
        const float* chunk = tap + ic0 * 64;
        // The next chunk (nic * 64 floats, 4 * nic cache lines) is fetched a quarter per tile
        // over the first 4 tiles, the rest after the last tile when there are fewer.
        const float* next = chunk + nic * 64;
        const bool fetch = next + nic * 64 <= prefetch_end;
        const float* xt[kMaxTile];
        for (int64_t t = 0, p0 = 0; t < tiles; ++t) {
          const int64_t p1 = n * (t + 1) / tiles;
          for (int64_t p = p0; p < p1; ++p) xt[p - p0] = xs[p] + ic0;
          TileN(static_cast<int>(p1 - p0), xt, accs + p0, chunk, nic, fetch && t < 4 ? next + t * nic * 16 : nullptr);
          p0 = p1;
        }
        if (fetch)
          for (int64_t line = std::min<int64_t>(tiles, 4) * nic; line < 4 * nic; ++line)
            _mm_prefetch(reinterpret_cast<const char*>(next + line * 16), _MM_HINT_T1);
      }
    }
}

}  // namespace tandem::cpu::small_map
#endif
