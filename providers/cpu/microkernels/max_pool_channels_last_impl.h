// max_pool_channels_last.h's per-pixel loop, compiled once per instruction set: the
// including file defines POOL_ISA (the namespace) and POOL_LANES (floats per vector
// register) and is built with the matching compiler flags.
#include <cstdint>
#include <cstring>

#include "providers/cpu/microkernels/max_pool_channels_last.h"

namespace tandem::cpu::pool_cl::POOL_ISA {

constexpr int kLanes = POOL_LANES;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float)), may_alias));

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// V vectors of channels from c on, kept in registers over the whole window; vector v is
// read `stride` floats after vector v - 1 (kLanes: the next channels of the same pixel).
template <int V>
void Channels(const float* image, int64_t W, int64_t C, int64_t h0, int64_t h1, int64_t w0, int64_t w1, int64_t c,
              float* out, int64_t stride = kLanes) {
  Vec m[V];
  const float* first = image + (h0 * W + w0) * C + c;
  for (int v = 0; v < V; ++v) m[v] = Load(first + v * stride);
  for (int64_t h = h0; h < h1; ++h)
    for (int64_t j = w0; j < w1; ++j) {
      const float* p = image + (h * W + j) * C + c;
      for (int v = 0; v < V; ++v) {
        const Vec x = Load(p + v * stride);
        m[v] = x > m[v] ? x : m[v];
      }
    }
  std::memcpy(out + c, m, sizeof m);
}

inline void Block(const float* image, int64_t W, int64_t C, int64_t h0, int64_t h1, int64_t w0, int64_t w1,
                  float* out) {
  int64_t c = 0;
  for (; c + 4 * kLanes <= C; c += 4 * kLanes) Channels<4>(image, W, C, h0, h1, w0, w1, c, out);
  for (; c + kLanes <= C; c += kLanes) Channels<1>(image, W, C, h0, h1, w0, w1, c, out);
  for (; c < C; ++c) {
    float m = image[(h0 * W + w0) * C + c];
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t j = w0; j < w1; ++j) {
        const float x = image[(h * W + j) * C + c];
        m = x > m ? x : m;  // no std::max: nothing inline shared with other builds
      }
    out[c] = m;
  }
}

inline void Pixel(const float* image, int64_t W, int64_t B, int64_t blocks, int64_t block_stride, int64_t h0,
                  int64_t h1, int64_t w0, int64_t w1, float* out) {
  int64_t b = 0;
  if (B == kLanes)  // one vector per block: four blocks at a time, as four vectors of one pixel
    for (; b + 4 <= blocks; b += 4)
      Channels<4>(image + b * block_stride, W, B, h0, h1, w0, w1, 0, out + b * B, block_stride);
  for (; b < blocks; ++b) Block(image + b * block_stride, W, B, h0, h1, w0, w1, out + b * B);
}

}  // namespace tandem::cpu::pool_cl::POOL_ISA
