// Tandem's own 3x3 convolutions on small channels-last maps (providers/cpu/kernels/
// small_map_conv.h): called directly against float64 loops written here (strides 1 and 2,
// maps whose rows split into several tiles, channel counts off the chunk size, residual
// sums, one and two threads), and inside a session, where the residual block's and the
// strided convolution's outputs are compared with float64 and the path must have run
// wherever it can (AVX-512 admitted by the CPU and ONEDNN_MAX_CPU_ISA; the _avx2 ctest entry
// runs the same model on oneDNN's kernels).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "graph/node.h"
#include "providers/cpu/microkernels/fused_activation.h"
#include "providers/cpu/microkernels/small_map_conv.h"
#include "runtime/session.h"
#include "tests/residual_block_model.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;
namespace sm = tandem::cpu::small_map;

float Pattern(int64_t i, float scale) { return scale * std::sin(0.731f * static_cast<float>(i) + 0.2f); }

// y [n, oh, ow, m] = b + conv(x [n, h, w, c], w [m, c, 3, 3]) in float64, padding 1.
std::vector<double> ConvNhwc(const sm::Shape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b) {
  const int64_t oh = s.oh(), ow = s.ow();
  std::vector<double> y(s.n * oh * ow * s.m);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t m = 0; m < s.m; ++m) {
          double acc = b.empty() ? 0.0 : b[m];
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t iy = oy * s.stride + kh - 1, ix = ox * s.stride + kw - 1;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
              for (int64_t c = 0; c < s.c; ++c)
                acc += double{x[((n * s.h + iy) * s.w + ix) * s.c + c]} * w[((m * s.c + c) * 3 + kh) * 3 + kw];
            }
          y[((n * oh + oy) * ow + ox) * s.m + m] = acc;
        }
  return y;
}

TEST(SmallMapConv, MatchesFloat64) {
  if (!sm::Available()) GTEST_SKIP() << "the AVX-512 build cannot run here (CPU or ONEDNN_MAX_CPU_ISA)";
  Node relu;
  relu.attributes["activation"] = StringAttribute("Relu");
  relu.attributes["sum_activation"] = StringAttribute("Relu");
  const cpu::FusedActivation act(relu), sum_act(relu, "sum_activation"), none(Node{});
  struct Case {
    sm::Shape s;
    bool bias, sum;
  };
  // 7x7 (tiles of 5 and 6 pixels across rows), 5x9, stride 2 with odd and even sides (4x4
  // outputs: taps with fewer than 4 tiles), 160 channels (a 128-channel chunk and a
  // 32-channel one), 8x8 outputs (64 pixels, the most taken).
  const Case cases[] = {{{2, 32, 7, 7, 128, 1}, true, false},  {{1, 160, 5, 9, 64, 1}, true, true},
                        {{1, 48, 8, 6, 128, 2}, false, false}, {{2, 64, 7, 7, 64, 2}, true, true},
                        {{1, 16, 8, 8, 128, 1}, true, false}};
  for (const Case& k : cases) {
    const sm::Shape& s = k.s;
    for (int threads : {1, 2}) {
      SCOPED_TRACE("c " + std::to_string(s.c) + ", " + std::to_string(s.h) + "x" + std::to_string(s.w) + ", m " +
                   std::to_string(s.m) + ", stride " + std::to_string(s.stride) + ", threads " + std::to_string(threads));
      std::vector<float> x(s.n * s.h * s.w * s.c), w(s.m * s.c * 9), b(k.bias ? s.m : 0);
      for (size_t i = 0; i < x.size(); ++i) x[i] = Pattern(i, 1.f);
      for (size_t i = 0; i < w.size(); ++i) w[i] = Pattern(i * 3 + 1, 0.1f);
      for (size_t i = 0; i < b.size(); ++i) b[i] = Pattern(i + 5, 0.5f);
      std::vector<double> ref = ConvNhwc(s, x, w, b);
      const size_t out = ref.size();
      std::vector<float> y(out);
      for (size_t i = 0; i < out; ++i) y[i] = Pattern(i + 11, 1.f);  // the residual, with sum
      for (size_t i = 0; i < out; ++i) {
        if (!k.sum) continue;
        ref[i] = std::max(ref[i], 0.0) + y[i];
        ref[i] = std::max(ref[i], 0.0);
      }
      const sm::PackedWeights packed(w.data(), s.m, s.c);
      sm::Run(s, x.data(), packed, k.bias ? b.data() : nullptr, k.sum ? act : none, k.sum, sum_act, y.data(),
              threads);
      double largest = 0;
      for (double v : ref) largest = std::max(largest, std::abs(v));
      ASSERT_GT(largest, 0.5);
      for (size_t i = 0; i < out; ++i) ASSERT_NEAR(y[i], ref[i], 2e-6 * largest) << "at " << i;
    }
  }
}

TEST(SmallMapConv, SuitsLargeWeightsOnSmallMapsOnly) {
  const sm::Shape layer4{1, 512, 7, 7, 512, 1}, layer4_down{1, 256, 14, 14, 512, 2};
  EXPECT_EQ(sm::Suits(layer4, 2), sm::Available());
  EXPECT_EQ(sm::Suits(layer4_down, 2), sm::Available());
  EXPECT_EQ(sm::Suits(layer4, 1), sm::Available());
  EXPECT_FALSE(sm::Suits({1, 256, 14, 14, 256, 1}, 2));  // 196 output pixels
  EXPECT_FALSE(sm::Suits({1, 128, 7, 7, 128, 1}, 2));    // 0.6 MB of weights: stays cached
  EXPECT_FALSE(sm::Suits({1, 512, 7, 7, 480, 1}, 2));    // not whole panels
  EXPECT_FALSE(sm::Suits({1, 512, 7, 7, 512, 3}, 2));    // stride 3
  EXPECT_FALSE(sm::Suits(layer4, 3));                    // 8 panels do not split 3 ways
}

// 256 channels on 7x7: the residual convolution and the strided one read channels-last x.
constexpr int64_t kC = 256, kH = 7;
const ResidualBlock kBlock{kC, kC, kH, {0.004f}, {0.05f, 0.02f}, {0.003f, 0.0002f}, {0.02f}, {0.005f}, {{0.03f}}};

TEST(SmallMapConv, ResidualBlockInASessionMatchesFloat64) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", "nhwc");
  auto session = LoadTestModel(ResidualBlockModel(kBlock, "small_map"), true);  // 2 threads
  ASSERT_NE(session, nullptr);
  // The residual convolution and the strided one read channels-last x (the first reads the
  // plain graph input and stays with oneDNN).
  const bool path = sm::Suits({1, kC, kH, kH, kC, 1}, 2);
  for (int64_t N : {1, 2}) {
    SCOPED_TRACE("batch " + std::to_string(N));
    Tensor x = Tensor::Host(DataType::kFloat, {N, kC, kH, kH});
    std::vector<double> xd(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) xd[i] = x.data<float>()[i] = Pattern(i, 1.f);
    const int64_t before = sm::ConvsRun();
    auto out = session->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(sm::ConvsRun() - before, path ? 2 : 0);
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.dims(), (Dims{N, kC, 4, 4}));
    const auto ref = ResidualBlockReference(kBlock, xd, N);
    double largest = 0;
    for (double v : ref) largest = std::max(largest, std::abs(v));
    ASSERT_GT(largest, 0.1);
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(y.data<float>()[i], ref[i], 1e-5 * largest) << "at " << i;
  }
}

}  // namespace
}  // namespace tandem
