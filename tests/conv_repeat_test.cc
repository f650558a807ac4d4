// A session's convolutions called again and again, as a server calls them: each call's
// tensors are new buffers and the batch size changes between calls, while each Conv
// kernel keeps its oneDNN memories and its checked shapes from the last call
// (providers/cpu/kernels/conv.cc). Every call's outputs are compared with float64 loops
// written here, under each convolution layout, fused and unfused.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/session.h"
#include "tests/conv_reference.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

constexpr int64_t kC = 3, kM = 16, kH = 7;

// x[N,3,7,7] -> Conv 3x3 + Relu = s; Relu(Conv 3x3 (s) + s) = r (a residual join the fused
// graph folds into the convolution); y = Conv 3x3 stride 2 (r) + bias, a graph input (fed
// anew each call); the other biases are initializers.
onnx::ModelProto RepeatModel() {
  onnx::ModelProto m = EmptyModel(13, "repeat");
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  SetFloatType(x, "x", {1, kC, kH, kH});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  AddFloatInitializer(g, "w0", {kM, kC, 3, 3}, 0.05f);
  AddFloatInitializer(g, "b0", {kM}, 0.01f, 0.02f);
  AddFloatInitializer(g, "w1", {kM, kM, 3, 3}, 0.02f, 0.001f);
  AddFloatInitializer(g, "b1", {kM}, 0.02f);
  AddFloatInitializer(g, "w2", {kM, kM, 3, 3}, 0.03f);
  SetFloatType(g->add_input(), "bias", {kM});
  AddPaddedConv(g, "conv0", {"x", "w0", "b0"}, "c0", 1);
  AddNode(g, "Relu", "relu0", {"c0"}, {"s"});
  AddPaddedConv(g, "conv1", {"s", "w1", "b1"}, "c1", 1);
  AddNode(g, "Add", "add", {"c1", "s"}, {"a"});
  AddNode(g, "Relu", "relu1", {"a"}, {"r"});
  AddIntsAttribute(AddPaddedConv(g, "conv2", {"r", "w2", "bias"}, "y", 1), "strides", {2, 2});
  auto* y = g->add_output();
  SetFloatType(y, "y", {1, kM, 4, 4});
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  return m;
}

std::vector<double> Reference(const std::vector<double>& x, int64_t N, const std::vector<double>& b2) {
  const auto w0 = InitializerValues(kM * kC * 9, 0.05f, 0), b0 = InitializerValues(kM, 0.01f, 0.02f);
  const auto w1 = InitializerValues(kM * kM * 9, 0.02f, 0.001f), b1 = InitializerValues(kM, 0.02f, 0);
  const auto w2 = InitializerValues(kM * kM * 9, 0.03f, 0);
  int64_t h = 0;
  auto s = Conv2d(x, N, kC, kH, w0, b0, kM, 3, 1, 1, &h);
  Relu(s);
  auto r = Conv2d(s, N, kM, h, w1, b1, kM, 3, 1, 1, &h);
  for (size_t i = 0; i < r.size(); ++i) r[i] += s[i];
  Relu(r);
  return Conv2d(r, N, kM, h, w2, b2, kM, 3, 2, 1, &h);
}

class ConvRepeat : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvRepeat, EachCallWithNewBuffersAndBatchSizesMatchesFloat64) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    auto session = LoadTestModel(RepeatModel(), fusion);
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
      const auto ref = Reference(xd, N, bias_d);
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
