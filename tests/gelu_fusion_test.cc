// GELU fusion (optimizer/gelu_fusion.h): GELU spelled out in element-wise nodes — the
// legacy exporter's erf form after a MatMul + bias (BERT), GPT-2's tanh form as the dynamo
// exporter writes it, and the legacy exporter's tanh form with its constants on the left and
// x^3 as x * (x * x) — becomes one Gelu (then folded into the FusedMatMul before it),
// matching a float64 GELU; a near-miss constant and an intermediate that is also an output
// stay apart.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "onnx_import/import.h"
#include "optimizer/gelu_fusion.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

constexpr int64_t kRows = 4, kIn = 32, kOut = 24;

double GeluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

void AddScalar(onnx::GraphProto* g, const std::string& name, float value) { AddFloatInitializer(g, name, {}, 0.f, value); }

// x [4, 32] -> MatMul(w) + b = h -> Div(h, sqrt 2) -> Erf -> Add 1 -> Mul h -> Mul 0.5 = y.
onnx::ModelProto ErfAfterMatMulModel() {
  onnx::ModelProto m = EmptyModel(17, "gelu_erf");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {kRows, kIn});
  AddFloatInitializer(g, "w", {kIn, kOut}, 0.2f);
  AddFloatInitializer(g, "b", {kOut}, 0.5f, -0.2f);
  AddScalar(g, "sqrt2", 1.4142135f);
  AddScalar(g, "one", 1.f);
  AddScalar(g, "half", 0.5f);
  AddNode(g, "MatMul", "matmul", {"x", "w"}, {"mm"});
  AddNode(g, "Add", "bias", {"mm", "b"}, {"h"});
  AddNode(g, "Div", "div", {"h", "sqrt2"}, {"d"});
  AddNode(g, "Erf", "erf", {"d"}, {"e"});
  AddNode(g, "Add", "add1", {"e", "one"}, {"a"});
  AddNode(g, "Mul", "mulx", {"h", "a"}, {"p"});
  AddNode(g, "Mul", "half_of", {"p", "half"}, {"y"});
  SetFloatType(g->add_value_info(), "h", {kRows, kOut});
  SetFloatType(g->add_output(), "y", {kRows, kOut});
  return m;
}

// GPT-2's "gelu_new" as the dynamo exporter writes it, of x [4, 32] itself:
// Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), kappa)), beta)), 1)) = y. With
// `legacy`, the legacy exporter's arrangement: constants first, x^3 as x * (x * x),
// 0.5 * (x * (1 + tanh)). With `exposed`, the Tanh's output is also a graph output.
onnx::ModelProto TanhModel(bool legacy, float kappa, bool exposed) {
  onnx::ModelProto m = EmptyModel(17, "gelu_tanh");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {kRows, kIn});
  AddScalar(g, "half", 0.5f);
  AddScalar(g, "three", 3.f);
  AddScalar(g, "kappa", kappa);
  AddScalar(g, "beta", 0.7978846f);
  AddScalar(g, "one", 1.f);
  if (legacy) {
    AddNode(g, "Mul", "sq", {"x", "x"}, {"x2"});
    AddNode(g, "Mul", "cube", {"x", "x2"}, {"x3"});
    AddNode(g, "Mul", "k", {"kappa", "x3"}, {"kx3"});
    AddNode(g, "Add", "inner", {"x", "kx3"}, {"i"});
    AddNode(g, "Mul", "scaled", {"beta", "i"}, {"s"});
    AddNode(g, "Tanh", "tanh", {"s"}, {"t"});
    AddNode(g, "Add", "plus1", {"one", "t"}, {"a"});
    AddNode(g, "Mul", "mulx", {"x", "a"}, {"p"});
    AddNode(g, "Mul", "half_of", {"half", "p"}, {"y"});
  } else {
    AddNode(g, "Mul", "half_x", {"x", "half"}, {"hx"});
    AddNode(g, "Pow", "pow", {"x", "three"}, {"x3"});
    AddNode(g, "Mul", "k", {"x3", "kappa"}, {"kx3"});
    AddNode(g, "Add", "inner", {"x", "kx3"}, {"i"});
    AddNode(g, "Mul", "scaled", {"i", "beta"}, {"s"});
    AddNode(g, "Tanh", "tanh", {"s"}, {"t"});
    AddNode(g, "Add", "plus1", {"t", "one"}, {"a"});
    AddNode(g, "Mul", "product", {"hx", "a"}, {"y"});
  }
  SetFloatType(g->add_output(), "y", {kRows, kIn});
  if (exposed) SetFloatType(g->add_output(), "t", {kRows, kIn});
  return m;
}

Tensor Input() {
  Tensor x = Tensor::Host(DataType::kFloat, {kRows, kIn});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * i) * 4.f;
  return x;
}

// Output 0 of `session` on Input() against want(x) (elementwise in double).
void ExpectGelu(Session& session, const std::function<std::vector<double>(const Tensor&)>& want) {
  const Tensor x = Input();
  auto out = session.Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> ref = want(x);
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.numel(), static_cast<int64_t>(ref.size()));
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(y.data<float>()[i], ref[i], 2e-6 * scale) << "element " << i;
}

std::vector<double> Elementwise(const Tensor& x, double (*f)(double)) {
  std::vector<double> y(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = f(x.data<float>()[i]);
  return y;
}

TEST(GeluFusion, ErfFormAfterMatMulBecomesTheProductsActivation) {
  auto session = LoadTestModel(ErfAfterMatMulModel(), true);
  ASSERT_TRUE(session);
  const auto counts = OpCounts(session->graph());
  EXPECT_EQ(counts.count("Erf"), 0u);
  ASSERT_EQ(counts.count("FusedMatMul"), 1u);
  EXPECT_EQ(session->graph().nodes.size(), 1u);
  EXPECT_EQ(session->graph().nodes[0].attr_string("activation", ""), "Gelu");
  ExpectGelu(*session, [](const Tensor& x) {
    const std::vector<double> w = InitializerValues(kIn * kOut, 0.2f), b = InitializerValues(kOut, 0.5f, -0.2f);
    std::vector<double> y(kRows * kOut);
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t o = 0; o < kOut; ++o) {
        double acc = b[o];
        for (int64_t k = 0; k < kIn; ++k) acc += x.data<float>()[r * kIn + k] * w[k * kOut + o];
        y[r * kOut + o] = GeluErf(acc);
      }
    return y;
  });
}

TEST(GeluFusion, TanhFormInEitherArrangementBecomesOneGelu) {
  for (bool legacy : {false, true}) {
    SCOPED_TRACE(legacy ? "legacy exporter's arrangement" : "dynamo exporter's (GPT-2)");
    auto session = LoadTestModel(TanhModel(legacy, 0.044715f, false), true);
    ASSERT_TRUE(session);
    ASSERT_EQ(session->graph().nodes.size(), 1u);
    const Node& gelu = session->graph().nodes[0];
    EXPECT_EQ(gelu.op_type, "Gelu");
    EXPECT_EQ(gelu.domain, kTandemDomain);
    EXPECT_EQ(gelu.attr_string("approximate", ""), "tanh");
    ExpectGelu(*session, [](const Tensor& x) { return Elementwise(x, GeluTanh); });
  }
}

TEST(GeluFusion, NearMissesAndExposedIntermediatesStayApart) {
  Graph other_kappa = ImportTestModel(TanhModel(false, 0.05f, false));
  EXPECT_EQ(FuseGelu(other_kappa), 0) << "0.05 x^3 is not GELU's tanh approximation";
  Graph exposed = ImportTestModel(TanhModel(true, 0.044715f, true));
  EXPECT_EQ(FuseGelu(exposed), 0) << "the Tanh's output is also returned";
  Graph both = ImportTestModel(TanhModel(true, 0.044715f, false));
  EXPECT_EQ(FuseGelu(both), 1);
  // Unfused, the near miss still computes what it says.
  auto session = LoadTestModel(TanhModel(false, 0.05f, false), true);
  ASSERT_TRUE(session);
  EXPECT_EQ(OpCounts(session->graph()).count("Gelu"), 0u);
  ExpectGelu(*session, [](const Tensor& x) {
    return Elementwise(x, [](double v) { return 0.5 * v * (1.0 + std::tanh(0.7978846 * (v + 0.05 * v * v * v))); });
  });
}

}  // namespace
}  // namespace tandem
