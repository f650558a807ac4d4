// A residual Add read by LayerNormalization becomes one ai.tandem AddLayerNormalization on
// the CPU (providers/cpu/rewrites/add_layer_norm.h), post-norm (the sum read only by the
// normalization) and pre-norm (the sum also read further on: the node writes it too), and
// the results match float64 (epsilon 0.1: a dropped attribute would show). An Add that
// broadcasts, and a Scale of one value that LayerNormalization broadcasts, stay apart. The row kernel
// (microkernels/add_layer_norm.h) is checked in each build the CPU can run, rows shorter
// than a vector, with a tail, and longer than its stack buffer. ctest's
// cpu_fused_attention_avx2 / _sse41 run these with the builds capped.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "providers/cpu/microkernels/add_layer_norm.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using tandem::testing::AddFloatInitializer;
using tandem::testing::AddNode;
using tandem::testing::InitializerValues;
using tandem::testing::SetFloatType;

constexpr int64_t kB = 2, kS = 5, kN = 40;
constexpr float kEps = 0.1f;

std::vector<float> Wave(int64_t n, float freq, float amp, float offset) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = amp * std::sin(freq * static_cast<float>(i)) + offset;
  return v;
}

// Float64 LayerNormalization over rows of n of a + b.
std::vector<double> Reference(const std::vector<float>& a, const std::vector<float>& b, const std::vector<double>& g,
                              const std::vector<double>& beta, int64_t n) {
  std::vector<double> y(a.size());
  for (size_t r = 0; r < a.size() / n; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += static_cast<double>(a[r * n + j]) + b[r * n + j];
    mean /= n;
    for (int64_t j = 0; j < n; ++j) {
      const double d = static_cast<double>(a[r * n + j]) + b[r * n + j] - mean;
      var += d * d;
    }
    const double inv = 1.0 / std::sqrt(var / n + kEps);
    for (int64_t j = 0; j < n; ++j)
      y[r * n + j] = (static_cast<double>(a[r * n + j]) + b[r * n + j] - mean) * inv * g[j] + (beta.empty() ? 0 : beta[j]);
  }
  return y;
}

void ExpectNear(const float* got, const std::vector<double>& want, double tol, const char* what) {
  double scale = 0;
  for (double w : want) scale = std::max(scale, std::fabs(w));
  ASSERT_GT(scale, 0.1) << what;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * scale) << what << " element " << i;
}

// h = x + r; y = LayerNormalization(h); pre-norm: also z = h + y (h read on). `r_dims`
// other than x's makes the Add broadcast; `scale_size` 1 a broadcast Scale.
onnx::ModelProto Model(bool pre_norm, std::vector<int64_t> r_dims, int64_t scale_size = kN) {
  onnx::ModelProto m = tandem::testing::EmptyModel(17, "add_layer_norm");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {kB, kS, kN});
  SetFloatType(g->add_input(), "r", r_dims);
  AddFloatInitializer(g, "gamma", {scale_size}, 0.1f, 1.f);
  AddFloatInitializer(g, "beta", {scale_size}, 0.05f);
  AddNode(g, "Add", "residual", {"x", "r"}, {"h"});
  auto* ln = AddNode(g, "LayerNormalization", "norm", {"h", "gamma", "beta"}, {"y"});
  auto* eps = ln->add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(kEps);
  SetFloatType(g->add_output(), "y", {kB, kS, kN});
  if (pre_norm) {
    AddNode(g, "Add", "onward", {"h", "y"}, {"z"});
    SetFloatType(g->add_output(), "z", {kB, kS, kN});
  }
  SetFloatType(g->add_value_info(), "h", {kB, kS, kN});
  return m;
}

TEST(CpuAddLayerNorm, PostAndPreNormBecomeOneNodeAndMatchFloat64) {
  const std::vector<float> x = Wave(kB * kS * kN, 0.37f, 2.f, 0.3f), r = Wave(kB * kS * kN, 0.11f, 1.f, -0.2f);
  const std::vector<double> g = InitializerValues(kN, 0.1f, 1.f), beta = InitializerValues(kN, 0.05f);
  for (bool pre_norm : {false, true}) {
    SCOPED_TRACE(pre_norm ? "pre-norm" : "post-norm");
    auto session = tandem::testing::LoadTestModel(Model(pre_norm, {kB, kS, kN}), true);
    ASSERT_TRUE(session);
    const std::map<std::string, int> ops = tandem::testing::OpCounts(session->graph());
    EXPECT_EQ(ops.count("AddLayerNormalization") ? ops.at("AddLayerNormalization") : 0, 1);
    EXPECT_EQ(ops.count("LayerNormalization"), 0u);
    EXPECT_EQ(ops.count("Add") ? ops.at("Add") : 0, pre_norm ? 1 : 0);
    Tensor xt = Tensor::Host(DataType::kFloat, {kB, kS, kN}), rt = Tensor::Host(DataType::kFloat, {kB, kS, kN});
    std::copy(x.begin(), x.end(), xt.data<float>());
    std::copy(r.begin(), r.end(), rt.data<float>());
    auto out = session->Run({{"x", xt}, {"r", rt}});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> y = Reference(x, r, g, beta, kN);
    ExpectNear((*out)[0].data<float>(), y, 1e-6, "y");
    if (pre_norm) {
      std::vector<double> z(y.size());
      for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<double>(x[i]) + r[i] + y[i];
      ExpectNear((*out)[1].data<float>(), z, 1e-6, "z");
    }
  }
}

TEST(CpuAddLayerNorm, ABroadcastingAddOrScaleStaysApart) {
  for (bool broadcast_add : {true, false}) {
    SCOPED_TRACE(broadcast_add ? "Add" : "Scale");
    auto session = tandem::testing::LoadTestModel(
        broadcast_add ? Model(false, {kN}) : Model(false, {kB, kS, kN}, 1), true);
    ASSERT_TRUE(session);
    const std::map<std::string, int> ops = tandem::testing::OpCounts(session->graph());
    EXPECT_EQ(ops.count("AddLayerNormalization"), 0u);
    EXPECT_EQ(ops.count("Add"), 1u);
  }
}

TEST(CpuAddLayerNorm, OneSymbolCountsAsOneSize) {
  // x and r both declared [batch, S, N] fuse: the session refuses a run that binds batch
  // to two sizes (which the unfused Add would have broadcast), so the kernel never sees one.
  onnx::ModelProto m = Model(false, {kB, kS, kN});
  for (auto* v : {m.mutable_graph()->mutable_input(0), m.mutable_graph()->mutable_input(1),
                  m.mutable_graph()->mutable_output(0), m.mutable_graph()->mutable_value_info(0)})
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  auto session = tandem::testing::LoadTestModel(m, true);
  ASSERT_TRUE(session);
  EXPECT_EQ(tandem::testing::OpCounts(session->graph()).count("AddLayerNormalization"), 1u);
  auto out = session->Run({{"x", Tensor::Host(DataType::kFloat, {kB, kS, kN})},
                           {"r", Tensor::Host(DataType::kFloat, {1, kS, kN})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("batch"), std::string::npos) << out.status();
}

TEST(CpuAddLayerNorm, RowsInEachBuildMatchFloat64) {
  for (const cpu::add_layer_norm::Kernels* k : cpu::add_layer_norm::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    for (int64_t n : {int64_t{3}, int64_t{37}, int64_t{5000}}) {  // shorter than a vector; a tail; past 4096
      SCOPED_TRACE(n);
      const int64_t rows = 3;
      const std::vector<float> a = Wave(rows * n, 0.29f, 3.f, 10.f), b = Wave(rows * n, 0.07f, 1.f, 0.f);
      const std::vector<float> gamma = Wave(n, 0.5f, 0.2f, 1.f), beta = Wave(n, 0.9f, 0.1f, 0.f);
      const std::vector<double> gd(gamma.begin(), gamma.end()), bd(beta.begin(), beta.end());
      for (bool with_beta : {true, false}) {
        for (bool with_sum : {true, false}) {
          std::vector<float> y(a.size()), sum(a.size());
          k->rows(a.data(), b.data(), gamma.data(), with_beta ? beta.data() : nullptr, kEps, n, rows, y.data(),
                  with_sum ? sum.data() : nullptr);
          ExpectNear(y.data(), Reference(a, b, gd, with_beta ? bd : std::vector<double>{}, n), 2e-6, "y");
          if (with_sum)
            for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(sum[i], a[i] + b[i]) << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem
