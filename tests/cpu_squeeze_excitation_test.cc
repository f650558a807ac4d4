// Squeeze-and-excitation on the CPU, against float64: the gate's Mul folded into the
// convolution after it as FusedConv's Scale (providers/cpu/rewrites/conv_input_scale.h) —
// with a 1x1 projection (oneDNN's output-blocked weights, scaled in place), a 3x3 one (W
// scaled plain and reordered), and a residual sum beside the Scale — in each layout
// (channels-last, 16- and 8-channel blocks and plain, forced through TANDEM_CPU_CONV_LAYOUT);
// the weights scaled in oneDNN's output-blocked layout against a reorder of them scaled
// plain; the cases the pass must leave alone (weights too large for the map, two images,
// the product also returned, the switch off); and the pool at batch 1, whose pixels are split between threads (GlobalAveragePool
// and GlobalMaxPool of a channels-last map, providers/cpu/kernels/nn/pool.cc); with a SiLU
// convolution before the gate (EfficientNet's), the pool taken by its Swish pass as output 1
// (providers/cpu/rewrites/conv_mean.h), also with that pass switched off. ctest's
// conv_layouts_avx2 / _sse41 run these with oneDNN capped.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <dnnl.hpp>
#include <gtest/gtest.h>

#include "providers/cpu/kernels/nn/conv_weight_scale.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using tandem::testing::AddFloatInitializer;
using tandem::testing::AddIntsAttribute;
using tandem::testing::AddNode;
using tandem::testing::AddPaddedConv;
using tandem::testing::InitializerValues;
using tandem::testing::SetFloatType;
using tandem::testing::ScopedEnv;

using Map = std::vector<double>;  // [C, H, W] of one image

// Float64 convolution of one image, stride 1, zero padding k / 2 (odd k).
Map Conv(const Map& x, int64_t C, int64_t H, int64_t W, const std::vector<double>& w, int64_t O, int64_t k) {
  Map y(static_cast<size_t>(O * H * W), 0.0);
  const int64_t p = k / 2;
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          const double wv = w[static_cast<size_t>(((o * C + c) * k + i) * k + j)];
          for (int64_t h = 0; h < H; ++h) {
            const int64_t hh = h + i - p;
            if (hh < 0 || hh >= H) continue;
            for (int64_t v = 0; v < W; ++v) {
              const int64_t vv = v + j - p;
              if (vv >= 0 && vv < W) y[(o * H + h) * W + v] += wv * x[(c * H + hh) * W + vv];
            }
          }
        }
  return y;
}

struct Case {
  int64_t images, C, H, O, k;
  bool residual;
  bool p_returned = false;  // the gated map p is a graph output too
  bool silu = false;        // a = SiLU(Conv), written as Conv, Sigmoid, Mul
};

constexpr int64_t kIn = 4;  // x's channels

// x[N, 4, H, H] -> Conv C 3x3 [-> x * Sigmoid(x) with silu] = a -> ReduceMean(H, W) = m -> Conv C/4 1x1 + Relu -> Conv C
// 1x1 + Sigmoid = s -> Mul(a, s) = p ("scale") -> Conv O kxk ("project") = y, with
// `residual`: y + Relu(Conv O 1x1 of x) ("add"). Also amax = GlobalMaxPool(a).
onnx::ModelProto Model(const Case& t) {
  onnx::ModelProto m = tandem::testing::EmptyModel(13, "squeeze_excitation");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {t.images, kIn, t.H, t.H});
  AddFloatInitializer(g, "wa", {t.C, kIn, 3, 3}, 0.05f);
  AddFloatInitializer(g, "wr", {t.C / 4, t.C, 1, 1}, 0.3f);
  AddFloatInitializer(g, "we", {t.C, t.C / 4, 1, 1}, 0.5f, 0.1f);
  AddFloatInitializer(g, "wp", {t.O, t.C, t.k, t.k}, 0.07f);
  AddFloatInitializer(g, "wq", {t.O, kIn, 1, 1}, 0.2f);
  AddPaddedConv(g, "conv", {"x", "wa"}, t.silu ? "a0" : "a", 1);
  if (t.silu) {
    AddNode(g, "Sigmoid", "silu_sigmoid", {"a0"}, {"a0s"});
    AddNode(g, "Mul", "silu", {"a0", "a0s"}, {"a"});
  }
  AddIntsAttribute(AddNode(g, "ReduceMean", "mean", {"a"}, {"m"}), "axes", {2, 3});
  AddNode(g, "Conv", "reduce", {"m", "wr"}, {"r"});
  AddNode(g, "Relu", "relu", {"r"}, {"rr"});
  AddNode(g, "Conv", "expand", {"rr", "we"}, {"e"});
  AddNode(g, "Sigmoid", "gate", {"e"}, {"s"});
  AddNode(g, "Mul", "scale", {"a", "s"}, {"p"});
  AddPaddedConv(g, "project", {"p", "wp"}, t.residual ? "z" : "y", t.k / 2);
  if (t.residual) {
    AddNode(g, "Conv", "skip", {"x", "wq"}, {"sq"});
    AddNode(g, "Relu", "skip_relu", {"sq"}, {"q"});  // the skip convolution takes no sum
    AddNode(g, "Add", "add", {"z", "q"}, {"y"});
  }
  AddNode(g, "GlobalMaxPool", "gmp", {"a"}, {"amax"});
  SetFloatType(g->add_output(), "y", {t.images, t.O, t.H, t.H});
  SetFloatType(g->add_output(), "amax", {t.images, t.C, 1, 1});
  if (t.p_returned) SetFloatType(g->add_output(), "p", {t.images, t.C, t.H, t.H});
  return m;
}

std::vector<float> Input(const Case& t) {
  std::vector<float> x(static_cast<size_t>(t.images * kIn * t.H * t.H));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) + 0.2f;
  return x;
}

// y and amax of Model(t) in float64, image after image.
std::pair<std::vector<double>, std::vector<double>> Reference(const Case& t, const std::vector<float>& x) {
  const int64_t HW = t.H * t.H, R = t.C / 4;
  const std::vector<double> wa = InitializerValues(t.C * kIn * 9, 0.05f), wr = InitializerValues(R * t.C, 0.3f),
                            we = InitializerValues(t.C * R, 0.5f, 0.1f),
                            wp = InitializerValues(t.O * t.C * t.k * t.k, 0.07f), wq = InitializerValues(t.O * kIn, 0.2f);
  std::vector<double> y, amax;
  for (int64_t n = 0; n < t.images; ++n) {
    const Map xi(x.begin() + n * kIn * HW, x.begin() + (n + 1) * kIn * HW);
    Map a = Conv(xi, kIn, t.H, t.H, wa, t.C, 3);
    if (t.silu)
      for (double& v : a) v /= 1.0 + std::exp(-v);
    Map mean(static_cast<size_t>(t.C), 0.0);
    for (int64_t c = 0; c < t.C; ++c) {
      double mx = a[c * HW];
      for (int64_t i = 0; i < HW; ++i) mean[c] += a[c * HW + i], mx = std::max(mx, a[c * HW + i]);
      mean[c] /= static_cast<double>(HW);
      amax.push_back(mx);
    }
    Map r = Conv(mean, t.C, 1, 1, wr, R, 1);
    for (double& v : r) v = std::max(v, 0.0);
    Map s = Conv(r, R, 1, 1, we, t.C, 1);
    for (double& v : s) v = 1.0 / (1.0 + std::exp(-v));
    for (int64_t c = 0; c < t.C; ++c)
      for (int64_t i = 0; i < HW; ++i) a[c * HW + i] *= s[c];
    Map yi = Conv(a, t.C, t.H, t.H, wp, t.O, t.k);
    if (t.residual) {
      const Map q = Conv(xi, kIn, t.H, t.H, wq, t.O, 1);
      for (size_t i = 0; i < yi.size(); ++i) yi[i] += std::max(q[i], 0.0);
    }
    y.insert(y.end(), yi.begin(), yi.end());
  }
  return {y, amax};
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  ASSERT_GT(scale, 0.05) << what;
  // float32 pools sum up to 4096 pixels (64x64) before the gate: a few 1e-6 of the scale.
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], 5e-6 * scale) << what << " element " << i;
}

// Runs Model(t) with the rewrites on; `folded`: whether the Mul must have become the
// projection's Scale; `mean_folded`: whether the pool must have become the first
// convolution's output 1. Checks both outputs against float64.
void Check(const Case& t, bool folded, bool mean_folded = false) {
  auto session = tandem::testing::LoadTestModel(Model(t), true);
  ASSERT_TRUE(session);
  const Node* project = nullptr;
  for (const Node& n : session->graph().nodes)
    if (n.name.find("project") != std::string::npos) project = &n;
  ASSERT_NE(project, nullptr);
  const std::map<std::string, int> ops = tandem::testing::OpCounts(session->graph());
  EXPECT_EQ(ops.count("Mul"), folded ? 0u : 1u);
  EXPECT_EQ(project->has_input(4), folded) << project->name;
  EXPECT_EQ(project->name.rfind("scale+project", 0) == 0, folded) << project->name;
  if (t.residual) {
    EXPECT_TRUE(project->has_input(3)) << project->name << ": the residual sum";
  }
  int convs_with_mean = 0;
  for (const Node& n : session->graph().nodes) convs_with_mean += n.op_type == "FusedConv" && n.outputs.size() == 2;
  EXPECT_EQ(convs_with_mean, mean_folded ? 1 : 0);
  EXPECT_EQ(ops.count("GlobalAveragePool") + ops.count("ReduceMean"), mean_folded ? 0u : 1u);
  const std::vector<float> x = Input(t);
  Tensor xt = Tensor::Host(DataType::kFloat, {t.images, kIn, t.H, t.H});
  std::copy(x.begin(), x.end(), xt.data<float>());
  for (int run = 0; run < 2; ++run) {  // the second call scales the weights again
    auto out = session->Run({{"x", xt}});
    ASSERT_TRUE(out.ok()) << out.status();
    const auto [y, amax] = Reference(t, x);
    ExpectNear((*out)[0], y, "y");
    ExpectNear((*out)[1], amax, "amax");
  }
}

class SqueezeExcitation : public ::testing::TestWithParam<const char*> {};

TEST_P(SqueezeExcitation, GateFoldsIntoTheProjectionAndMatchesFloat64) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  // 1x1 and 3x3 projections (4 * O * k * k <= H * W), the second with a residual sum.
  Check({1, 32, 24, 16, 1, false}, true);
  Check({1, 32, 24, 16, 3, true}, true);
  Check({1, 48, 16, 16, 1, true}, true);
}

TEST_P(SqueezeExcitation, LargeWeightsTwoImagesAndTheSwitchKeepTheMul) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  Check({1, 32, 8, 32, 1, false}, false);        // 4 * 32 > 64 pixels
  Check({2, 32, 24, 16, 1, true}, false);        // the weights would differ per image
  Check({1, 32, 24, 16, 1, false, true}, false);  // the product is returned too
  const ScopedEnv off("TANDEM_CPU_CONV_INPUT_SCALE", "0");
  Check({1, 32, 24, 16, 1, false}, false);
}

// EfficientNet's block: the pool of a SiLU convolution's map is taken by its Swish pass in
// every blocked layout (one image: the pixels split between threads; two images; 8 and 16
// channels: the block's columns folded from a register), not in the plain one; with the
// pass switched off the kernel pools Y itself; with the rewrite off the pool stays.
TEST_P(SqueezeExcitation, SiluConvolutionTakesThePoolOnItsWay) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  const bool blocked = std::string(GetParam()) != "nchw";
  Case one{1, 48, 64, 16, 1, false};
  one.silu = true;
  Check(one, true, blocked);
  Case two{2, 32, 24, 16, 3, true};
  two.silu = true;
  Check(two, false, blocked);
  {
    const ScopedEnv own("TANDEM_CPU_OWN_SWISH", "0");
    Check(one, true, blocked);
  }
  const ScopedEnv off("TANDEM_CPU_CONV_MEAN", "0");
  Check(one, true, false);
}

// One image, 48 channels of 64x64: a single 64-channel task, so the pixels are split
// between threads and the parts' sums and maxima combined.
TEST_P(SqueezeExcitation, PoolOfOneLargeImageMatchesFloat64) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  Check({1, 48, 64, 16, 1, false}, true);
}

// W [20, 8, 3, 3] in each output-inner-blocked layout (20 is no multiple of the block: the
// last block is padded), scaled in place of the packed copy, equals W scaled plain and then
// reordered, bit for bit (the same products); a plain layout is not taken for one.
TEST(SqueezeExcitationWeights, ScaledInTheBlockedLayoutAsWhenScaledPlain) {
  using tag = dnnl::memory::format_tag;
  const dnnl::memory::dims dims = {20, 8, 3, 3};
  const int64_t taps = 9, n = 20 * 8 * taps;
  std::vector<float> w(static_cast<size_t>(n)), s(8), scaled(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[i] = std::sin(0.3f * static_cast<float>(i));
  for (int64_t c = 0; c < 8; ++c) s[c] = 0.1f + 0.1f * static_cast<float>(c);
  cpu::ScalePlainWeights(w.data(), s.data(), 20, 8, taps, scaled.data());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(scaled[i], w[i] * s[(i / taps) % 8]) << i;
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  const dnnl::memory::desc plain(dims, dnnl::memory::data_type::f32, tag::abcd);
  EXPECT_EQ(cpu::OutputInnerBlock(plain, dims), 0);
  const std::pair<tag, int> layouts[] = {{tag::Acdb16a, 16}, {tag::Acdb32a, 32}, {tag::Acdb64a, 64}};
  for (const auto& [t, b] : layouts) {
    SCOPED_TRACE(b);
    const dnnl::memory::desc packed(dims, dnnl::memory::data_type::f32, t);
    ASSERT_EQ(cpu::OutputInnerBlock(packed, dims), b);
    dnnl::memory src(plain, eng, w.data()), src_scaled(plain, eng, scaled.data());
    dnnl::memory w_packed(packed, eng), want(packed, eng), got(packed, eng);
    dnnl::reorder(src, w_packed).execute(stream, src, w_packed);
    dnnl::reorder(src_scaled, want).execute(stream, src_scaled, want);
    stream.wait();
    cpu::ScaleInnerBlockedWeights(static_cast<const float*>(w_packed.get_data_handle()), s.data(), (20 + b - 1) / b,
                                  8, taps, b, static_cast<float*>(got.get_data_handle()));
    const size_t bytes = packed.get_size();
    ASSERT_EQ(bytes, static_cast<size_t>((20 + b - 1) / b * b * 8 * taps) * sizeof(float));
    EXPECT_EQ(std::memcmp(got.get_data_handle(), want.get_data_handle(), bytes), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SqueezeExcitation, ::testing::Values("nhwc", "nChw16c", "nChw8c", "nchw"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace tandem
