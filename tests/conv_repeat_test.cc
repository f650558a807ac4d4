// A session's convolutions called again and again, as a server calls them: each call's
// tensors are new buffers and the batch size changes between calls, while each Conv
// kernel keeps its oneDNN memories and its checked shapes from the last call
// (providers/cpu/kernels/nn/conv.cc). Every call's outputs are compared with float64 loops
// (residual_block_model.h), under each convolution layout, fused and unfused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/session.h"
#include "tests/residual_block_model.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

constexpr int64_t kC = 3, kM = 16, kH = 7;

// x [N, 3, 7, 7] -> the residual block of residual_block_model.h with 16 channels (a join
// the fused graph folds into the convolution); the strided convolution's bias is a graph
// input, fed anew each call; the other biases are initializers.
const ResidualBlock kBlock{kC, kM, kH, {0.05f}, {0.01f, 0.02f}, {0.02f, 0.001f}, {0.02f}, {0.03f}, std::nullopt};

class ConvRepeat : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvRepeat, EachCallWithNewBuffersAndBatchSizesMatchesFloat64) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    auto session = LoadTestModel(ResidualBlockModel(kBlock, "repeat"), fusion);
    ASSERT_NE(session, nullptr);
    int call = 0;
    for (int64_t N : {2, 3, 2, 2, 1, 3}) {
      SCOPED_TRACE("call " + std::to_string(call) + ", batch " + std::to_string(N));
      // New input tensors each call, with values of their own.
      Tensor x = Tensor::Host(DataType::kFloat, {N, kC, kH, kH});
      std::vector<double> xd(x.numel());
      for (int64_t i = 0; i < x.numel(); ++i) {
        x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i) + 1.3f * static_cast<float>(call));
        xd[i] = x.data<float>()[i];
      }
      Tensor bias = Tensor::Host(DataType::kFloat, {kM});
      std::vector<double> bias_d(kM);
      for (int64_t i = 0; i < kM; ++i) bias_d[i] = bias.data<float>()[i] = 0.1f * static_cast<float>((i + call) % 5) - 0.2f;
      auto out = session->Run({{"x", x}, {"bias", bias}});
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& y = (*out)[0];
      ASSERT_EQ(y.dims(), (Dims{N, kM, 4, 4}));
      const auto ref = ResidualBlockReference(kBlock, xd, N, bias_d);
      double largest = 0;
      for (double v : ref) largest = std::max(largest, std::abs(v));
      ASSERT_GT(largest, 0.1);
      for (int64_t i = 0; i < y.numel(); ++i)
        ASSERT_NEAR(y.data<float>()[i], ref[i], 1e-5 * largest) << "at " << i;
      ++call;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConvRepeat, ::testing::Values("nhwc", "nChw16c", "nChw8c", "nchw"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace tandem
