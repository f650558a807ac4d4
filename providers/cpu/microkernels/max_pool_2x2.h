// 2x2, stride-2 max pooling without padding (floor mode: a trailing odd row/column is
// dropped) — the usual CNN downsampling step — straight from plain NCHW or from oneDNN's
// channel-blocked layout (nChw8c / nChw16c) into plain NCHW, the same blocked layout or
// channels-last (nhwc), and from channels-last into channels-last.
// Used by MaxPool (pool.cc) and by FusedConv with a fused pool (conv.cc), where it
// replaces the reorder of the convolution's blocked output: the input is read once and
// only the 4x smaller result is written.
#pragma once
#include <algorithm>
#include <cstdint>

namespace tandem::cpu {

// x: [planes, H, W] -> y: [planes, H/2, W/2].
inline void MaxPool2x2(const float* x, float* y, int64_t planes, int64_t H, int64_t W) {
  const int64_t OH = H / 2, OW = W / 2;
#pragma omp parallel for schedule(static) if (planes * H * W >= (1 << 16))
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const float* r0 = x + (p * H + 2 * oh) * W;
      const float* r1 = r0 + W;
      float* out = y + (p * OH + oh) * OW;
      for (int64_t j = 0; j < OW; ++j)
        out[j] = std::max(std::max(r0[2 * j], r0[2 * j + 1]), std::max(r1[2 * j], r1[2 * j + 1]));
    }
}

// Where MaxPool2x2FromBlocked writes: plain [N, C, H/2, W/2], the input's channel blocks
// [N, ceil(C/B), H/2, W/2, B] (padding lanes pooled like the rest), or channels-last
// [N, H/2, W/2, C].
enum class PoolOut { kPlain, kSameBlocks, kChannelsLast };

// x: [N, ceil(C/B), H, W, B] (channel blocks of B, zero-padded) -> y in the kOut layout.
template <int B, PoolOut kOut>
void MaxPool2x2FromBlocked(const float* x, float* y, int64_t N, int64_t C, int64_t H,
                           int64_t W) {
  const int64_t OH = H / 2, OW = W / 2, CB = (C + B - 1) / B;
#pragma omp parallel for collapse(2) schedule(static) if (N * C * H * W >= (1 << 16))
  for (int64_t n = 0; n < N; ++n)
    for (int64_t cb = 0; cb < CB; ++cb) {
      const float* xb = x + (n * CB + cb) * H * W * B;
      const int64_t cn = std::min<int64_t>(B, C - cb * B);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const float* a = xb + ((2 * oh) * W + 2 * ow) * B;  // window's top-left
          const float* c = a + W * B;                         // its bottom-left
          auto window_max = [&](int k) { return std::max(std::max(a[k], a[B + k]), std::max(c[k], c[B + k])); };
          if (kOut == PoolOut::kChannelsLast && cn == B) {  // a whole block: B stores in a row
            float* yb = y + ((n * OH + oh) * OW + ow) * C + cb * B;
            for (int k = 0; k < B; ++k) yb[k] = window_max(k);
            continue;
          }
          float m[B];
          for (int k = 0; k < B; ++k) m[k] = window_max(k);
          if constexpr (kOut == PoolOut::kSameBlocks) {
            float* yb = y + (((n * CB + cb) * OH + oh) * OW + ow) * B;
            for (int k = 0; k < B; ++k) yb[k] = m[k];
          } else if constexpr (kOut == PoolOut::kChannelsLast) {
            float* yb = y + ((n * OH + oh) * OW + ow) * C + cb * B;
            for (int64_t k = 0; k < cn; ++k) yb[k] = m[k];
          } else {
            float* yb = y + (n * C + cb * B) * OH * OW;
            for (int64_t k = 0; k < cn; ++k) yb[k * OH * OW + oh * OW + ow] = m[k];
          }
        }
    }
}

// x: [N, H, W, C] (channels-last) -> y: [N, H/2, W/2, C].
inline void MaxPool2x2ChannelsLast(const float* x, float* y, int64_t N, int64_t C, int64_t H, int64_t W) {
  const int64_t OH = H / 2, OW = W / 2;
#pragma omp parallel for collapse(2) schedule(static) if (N * C * H * W >= (1 << 16))
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const float* row = x + (n * H + 2 * oh) * W * C;
      float* out = y + (n * OH + oh) * OW * C;
      for (int64_t ow = 0; ow < OW; ++ow) {
        const float* a = row + 2 * ow * C;  // window's top-left pixel
        const float* b = a + W * C;          // its bottom-left
        for (int64_t k = 0; k < C; ++k)
          out[ow * C + k] = std::max(std::max(a[k], a[C + k]), std::max(b[k], b[C + k]));
      }
    }
}

}  // namespace tandem::cpu
