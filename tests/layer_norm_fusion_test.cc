// Layer normalization fusion (optimizer/layer_norm_fusion.h): the nine-node opset-13 form
// of nn.LayerNorm becomes one LayerNormalization whose result matches the unfused graph
// and a float64 reference; a pattern whose intermediate is also an output stays apart.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_import/import.h"
#include "optimizer/layer_norm_fusion.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

constexpr int64_t kRows = 10, kWidth = 16;
constexpr float kEps = 1e-5f;

// x [2, 5, 16] -> LayerNorm over the last axis (gamma, beta) -> y; with `expose_d` the
// deviation d = x - mean is also a graph output.
onnx::ModelProto LayerNormModel(bool expose_d) {
  onnx::ModelProto m = EmptyModel(13, "layer_norm");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 5, kWidth});
  AddFloatInitializer(g, "two", {}, 0.f, 2.f);
  AddFloatInitializer(g, "eps", {}, 0.f, kEps);
  AddFloatInitializer(g, "gamma", {kWidth}, 0.1f, 1.f);
  AddFloatInitializer(g, "beta", {kWidth}, 0.05f);
  AddIntsAttribute(AddNode(g, "ReduceMean", "mean", {"x"}, {"m"}), "axes", {-1});
  AddNode(g, "Sub", "sub", {"x", "m"}, {"d"});
  AddNode(g, "Pow", "pow", {"d", "two"}, {"p"});
  AddIntsAttribute(AddNode(g, "ReduceMean", "var", {"p"}, {"v"}), "axes", {-1});
  AddNode(g, "Add", "add_eps", {"v", "eps"}, {"e"});
  AddNode(g, "Sqrt", "sqrt", {"e"}, {"s"});
  AddNode(g, "Div", "div", {"d", "s"}, {"n"});
  AddNode(g, "Mul", "mul", {"n", "gamma"}, {"g"});
  AddNode(g, "Add", "add_beta", {"beta", "g"}, {"y"});
  SetFloatType(g->add_output(), "y", {2, 5, kWidth});
  if (expose_d) SetFloatType(g->add_output(), "d", {2, 5, kWidth});
  return m;
}

std::unique_ptr<Session> Load(bool expose_d, bool fusion) {
  const std::string bytes = Serialize(LayerNormModel(expose_d));
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "layer_norm");
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  SessionOptions o;
  o.num_threads = 1;
  o.fusion = fusion;
  auto s = Session::FromGraph(std::move(*g), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

int CountOp(const Graph& g, const std::string& op) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.op_type == op;
  return c;
}

TEST(LayerNormFusion, NineNodesBecomeOneWithTheSameResult) {
  auto fused = Load(false, true), plain = Load(false, false);
  ASSERT_TRUE(fused && plain);
  EXPECT_EQ(fused->graph().nodes.size(), 1u);
  EXPECT_EQ(CountOp(fused->graph(), "LayerNormalization"), 1);
  EXPECT_EQ(plain->graph().nodes.size(), 9u);

  Tensor x = Tensor::Host(DataType::kFloat, {2, 5, kWidth});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 3.f * std::sin(0.7f * i) + 0.1f * i;
  auto a = fused->Run({{"x", x}});
  auto b = plain->Run({{"x", x}});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  const float* ya = (*a)[0].data<float>();
  const float* yb = (*b)[0].data<float>();
  // Reference in float64 with the initializers' values (see AddFloatInitializer).
  const float* px = x.data<float>();
  for (int64_t r = 0; r < kRows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < kWidth; ++j) mean += px[r * kWidth + j];
    mean /= kWidth;
    for (int64_t j = 0; j < kWidth; ++j) var += std::pow(px[r * kWidth + j] - mean, 2);
    var /= kWidth;
    for (int64_t j = 0; j < kWidth; ++j) {
      const double gamma = 0.1 * ((j * 7) % 11 - 5) + 1.0, beta = 0.05 * ((j * 7) % 11 - 5);
      const double want = (px[r * kWidth + j] - mean) / std::sqrt(var + kEps) * gamma + beta;
      EXPECT_NEAR(ya[r * kWidth + j], want, 2e-5) << "fused, row " << r << " col " << j;
      EXPECT_NEAR(yb[r * kWidth + j], want, 2e-5) << "unfused, row " << r << " col " << j;
    }
  }
}

TEST(LayerNormFusion, AnIntermediateGraphOutputKeepsThePatternApart) {
  auto s = Load(true, true);
  ASSERT_TRUE(s);
  EXPECT_EQ(CountOp(s->graph(), "LayerNormalization"), 0);
  EXPECT_EQ(CountOp(s->graph(), "ReduceMean"), 2);
}

}  // namespace
}  // namespace tandem
