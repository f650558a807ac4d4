// The channels-last max pool (providers/cpu/microkernels/max_pool_channels_last.h), from
// channels-last and channel-blocked input: every instruction-set build this CPU can run,
// called directly, against a plain loop over the window in float64 order-free max —
// windows with padding, strides, ceil-mode sizes and channel counts that leave vector
// tails; and which windows it takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/microkernels/max_pool_channels_last.h"

namespace tandem {
namespace {

using cpu::pool_cl::Window2d;

struct Case {
  int64_t n, c, h, w, oh, ow;
  Window2d win;
};

// y[n][oh][ow][c] = max of x[n][h][w][c] over the window's pixels inside the image.
std::vector<float> Reference(const std::vector<float>& x, const Case& k) {
  std::vector<float> y(k.n * k.oh * k.ow * k.c);
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t oh = 0; oh < k.oh; ++oh)
      for (int64_t ow = 0; ow < k.ow; ++ow)
        for (int64_t c = 0; c < k.c; ++c) {
          float m = -INFINITY;
          for (int64_t i = 0; i < k.win.kh; ++i)
            for (int64_t j = 0; j < k.win.kw; ++j) {
              const int64_t h = oh * k.win.sh - k.win.ph + i, w = ow * k.win.sw - k.win.pw + j;
              if (h >= 0 && h < k.h && w >= 0 && w < k.w) m = std::max(m, x[((n * k.h + h) * k.w + w) * k.c + c]);
            }
          y[((n * k.oh + oh) * k.ow + ow) * k.c + c] = m;
        }
  return y;
}

// Channels-last x [N, H, W, C] stored in blocks of B channels, [N, C/B, H, W, B] (B = C:
// unchanged).
std::vector<float> InBlocks(const std::vector<float>& x, const Case& k, int64_t B) {
  std::vector<float> out(x.size());
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t p = 0; p < k.h * k.w; ++p)
      for (int64_t c = 0; c < k.c; ++c)
        out[((n * (k.c / B) + c / B) * k.h * k.w + p) * B + c % B] = x[(n * k.h * k.w + p) * k.c + c];
  return out;
}

// Each case from channels-last input and, where the channels divide, from 8- and 16-channel
// blocks (a first convolution's output, blocked_layout.h).
TEST(MaxPoolChannelsLast, EveryBuildMatchesTheWindowLoop) {
  const std::vector<Case> cases = {
      {1, 64, 111, 111, 55, 55, {3, 3, 2, 2, 0, 0}},  // squeezenet1_1's first pool (ceil mode)
      {2, 64, 112, 112, 56, 56, {3, 3, 2, 2, 1, 1}},  // resnet's, padded
      {1, 24, 10, 10, 5, 5, {3, 3, 2, 2, 1, 1}},      // 8-channel blocks only
      {1, 100, 13, 13, 7, 7, {3, 3, 2, 2, 0, 0}},     // ceil mode: the last window hangs over
      {3, 5, 9, 7, 4, 3, {2, 2, 2, 2, 0, 0}},         // scalar channels only
      {1, 24, 6, 6, 6, 6, {3, 3, 1, 1, 1, 1}},        // stride 1, 'same'
      {2, 17, 5, 8, 3, 4, {2, 3, 2, 2, 0, 1}},        // unequal windows and pads, a vector tail
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  const auto builds = cpu::pool_cl::Builds().runnable();
  ASSERT_FALSE(builds.empty());
  for (const Case& k : cases) {
    ASSERT_TRUE(cpu::pool_cl::WindowsHitTheImage(k.h, k.w, k.oh, k.ow, k.win));
    std::vector<float> x(k.n * k.h * k.w * k.c);
    for (float& v : x) v = u(rng);
    const std::vector<float> want = Reference(x, k);
    for (const int64_t block : {k.c, int64_t{8}, int64_t{16}}) {
      if (k.c % block != 0) continue;
      const std::vector<float> stored = InBlocks(x, k, block);
      for (const auto* build : builds) {
        std::vector<float> y(want.size(), NAN);
        cpu::pool_cl::MaxPool(*build, stored.data(), y.data(), k.n, k.c, k.h, k.w, k.oh, k.ow, k.win, block);
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(y[i], want[i]) << build->isa << ", case c=" << k.c << " h=" << k.h << ", input block " << block
                                   << ", element " << i;
      }
    }
  }
}

TEST(MaxPoolChannelsLast, TakesOnlyWindowsThatHitTheImage) {
  EXPECT_TRUE(cpu::pool_cl::WindowsHitTheImage(4, 4, 2, 2, {2, 2, 2, 2, 0, 0}));
  // A window wholly inside the begin padding (pad >= window)...
  EXPECT_FALSE(cpu::pool_cl::WindowsHitTheImage(4, 4, 3, 3, {2, 2, 2, 2, 2, 2}));
  // ...or one starting past the image's end.
  EXPECT_FALSE(cpu::pool_cl::WindowsHitTheImage(4, 4, 3, 2, {2, 2, 2, 2, 0, 0}));
  EXPECT_TRUE(cpu::pool_cl::WindowsHitTheImage(4, 4, 0, 0, {2, 2, 2, 2, 5, 5}));
}

}  // namespace
}  // namespace tandem
