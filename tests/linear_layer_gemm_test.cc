// Linear layers on a transposed weight become one Gemm before training's gradients
// (optimizer/linear_layer_gemm.h): the rewritten graph computes what a float64 reference
// computed here does (3-D and 2-D inputs, with and without the bias), leaves alone what it
// must (a perm other than [1, 0], an empty inner dim; of a product the graph returns, the
// bias Add), and a model of such layers trains with the same losses as with the rewrite
// switched off (TANDEM_LINEAR_GEMM=0), which differentiates MatMul and Transpose instead.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optimizer/linear_layer_gemm.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"
#include "training/trainer.h"

namespace tandem {
namespace {

using testing::AddFloatInitializer;
using testing::AddIntsAttribute;
using testing::AddNode;
using testing::SetFloatType;

Tensor Pattern(const Dims& dims, float freq) {
  Tensor t = Tensor::Host(DataType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(freq * static_cast<float>(i) + 0.2f);
  return t;
}

// y = x W^T [+ b] for x `x_dims` [..., K], W [N, K] and b [N] graph inputs; `perm` the
// Transpose's; `y_is_product`: the MatMul's output is also a graph output.
onnx::ModelProto Linear(const Dims& x_dims, int64_t N, bool bias, std::vector<int64_t> perm = {1, 0},
                        bool y_is_product = false) {
  onnx::ModelProto m = testing::EmptyModel(17, "linear");
  auto* g = m.mutable_graph();
  const int64_t K = x_dims.back();
  SetFloatType(g->add_input(), "x", std::vector<int64_t>(x_dims.begin(), x_dims.end()));
  SetFloatType(g->add_input(), "w", {N, K});
  if (bias) SetFloatType(g->add_input(), "b", {N});
  AddIntsAttribute(AddNode(g, "Transpose", "wt", {"w"}, {"w_t"}), "perm", perm);
  AddNode(g, "MatMul", "product", {"x", "w_t"}, {bias ? "p" : "y"});
  if (bias) AddNode(g, "Add", "bias", {"p", "b"}, {"y"});
  std::vector<int64_t> y_dims(x_dims.begin(), x_dims.end());
  y_dims.back() = N;
  SetFloatType(g->add_output(), "y", y_dims);
  if (y_is_product && bias) SetFloatType(g->add_output(), "p", y_dims);
  return m;
}

TEST(LinearLayerGemm, RewrittenLayersMatchFloat64) {
  for (const Dims& x_dims : {Dims{2, 3, 4}, Dims{5, 4}, Dims{2, 1, 3, 4}})
    for (bool bias : {true, false}) {
      SCOPED_TRACE(DimsToString(x_dims) + (bias ? " with bias" : ""));
      const int64_t N = 6, K = 4, rows = NumElements(x_dims) / K;
      Graph g = testing::ImportTestModel(Linear(x_dims, N, bias));
      ASSERT_EQ(FuseLinearLayersIntoGemm(g), 1);
      const auto ops = testing::OpCounts(g);
      EXPECT_EQ(ops.count("MatMul") + ops.count("Transpose") + ops.count("Add"), 0u);
      EXPECT_EQ(ops.count("Gemm") ? ops.at("Gemm") : 0, 1);
      EXPECT_EQ(ops.count("Reshape") ? ops.at("Reshape") : 0, x_dims.size() == 2 ? 0 : 2);
      const Tensor x = Pattern(x_dims, 0.7f), w = Pattern({N, K}, 0.3f), b = Pattern({N}, 1.1f);
      std::map<std::string, Tensor> feeds = {{"x", x}, {"w", w}};
      if (bias) feeds["b"] = b;
      SessionOptions so;
      so.num_threads = 2;
      auto session = Session::FromGraph(std::move(g), so);
      ASSERT_TRUE(session.ok()) << session.status();
      auto out = (*session)->Run(feeds);
      ASSERT_TRUE(out.ok()) << out.status();
      Dims y_dims = x_dims;
      y_dims.back() = N;
      ASSERT_EQ((*out)[0].dims(), y_dims);
      double err = 0, scale = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t n = 0; n < N; ++n) {
          double want = bias ? b.data<float>()[n] : 0.0;
          for (int64_t k = 0; k < K; ++k)
            want += static_cast<double>(x.data<float>()[r * K + k]) * w.data<float>()[n * K + k];
          err = std::max(err, std::fabs((*out)[0].data<float>()[r * N + n] - want));
          scale = std::max(scale, std::fabs(want));
        }
      EXPECT_LE(err / scale, 1e-6);
    }
}

TEST(LinearLayerGemm, LeavesOtherPermutationsEmptyLayersAndReturnedProductsAlone) {
  Graph swapped = testing::ImportTestModel(Linear({3, 4}, 4, true, {0, 1}));
  EXPECT_EQ(FuseLinearLayersIntoGemm(swapped), 0);
  Graph empty_rows = testing::ImportTestModel(Linear({2, 3, 0}, 4, true));  // K = 0: Reshape(A, [-1, 0]) cannot be
  EXPECT_EQ(FuseLinearLayersIntoGemm(empty_rows), 0);
  Graph returned = testing::ImportTestModel(Linear({3, 4}, 6, true, {1, 0}, /*y_is_product=*/true));
  EXPECT_EQ(FuseLinearLayersIntoGemm(returned), 1);  // the product is returned: its Add stays apart
  const auto ops = testing::OpCounts(returned);
  EXPECT_EQ(ops.count("Add") ? ops.at("Add") : 0, 1);
  EXPECT_EQ(ops.count("MatMul"), 0u);
}

// Two layers with a Tanh between, weights as initializers (trained), on x [N, S, K].
onnx::ModelProto TwoLayers() {
  onnx::ModelProto m = testing::EmptyModel(17, "two_layers");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {4, 3, 8});
  SetFloatType(g->add_output(), "y", {4, 3, 5});
  AddFloatInitializer(g, "w1", {16, 8}, 0.05f, 0.01f);
  AddFloatInitializer(g, "b1", {16}, 0.02f);
  AddFloatInitializer(g, "w2", {5, 16}, 0.04f, -0.01f);
  AddFloatInitializer(g, "b2", {5}, 0.03f);
  AddIntsAttribute(AddNode(g, "Transpose", "w1t", {"w1"}, {"w1_t"}), "perm", {1, 0});
  AddNode(g, "MatMul", "mm1", {"x", "w1_t"}, {"p1"});
  AddNode(g, "Add", "add1", {"p1", "b1"}, {"h"});
  AddNode(g, "Tanh", "act", {"h"}, {"a"});
  AddIntsAttribute(AddNode(g, "Transpose", "w2t", {"w2"}, {"w2_t"}), "perm", {1, 0});
  AddNode(g, "MatMul", "mm2", {"a", "w2_t"}, {"p2"});
  AddNode(g, "Add", "add2", {"b2", "p2"}, {"y"});
  return m;
}

std::vector<double> Train(bool rewrite, std::map<std::string, int>* ops) {
  testing::ScopedEnv env("TANDEM_LINEAR_GEMM", rewrite ? "1" : "0");
  training::TrainerOptions o;
  o.num_threads = 2;
  o.spec.optimizer.kind = training::OptimizerKind::kAdam;
  o.spec.optimizer.lr = 0.005f;
  auto t = training::Trainer::Create(testing::ImportTestModel(TwoLayers()), o);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  for (const Node& n : (*t)->training_graph().graph.nodes) ++(*ops)[n.op_type];
  return testing::StepLosses(**t, "x", Pattern({4, 3, 8}, 0.37f), Pattern({4, 3, 5}, 0.91f), 15);
}

TEST(LinearLayerGemm, TrainsAsTheMatMulAndTransposeGradientsDo) {
  std::map<std::string, int> fused_ops, plain_ops;
  const std::vector<double> fused = Train(true, &fused_ops), plain = Train(false, &plain_ops);
  EXPECT_EQ(fused_ops["Transpose"] + fused_ops["MatMul"], 0);
  EXPECT_GT(plain_ops["Transpose"], 0);
  ASSERT_EQ(fused.size(), 15u);
  ASSERT_EQ(plain.size(), 15u);
  for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], plain[i], 1e-5 * plain[0]) << "step " << i + 1;
  EXPECT_LT(plain.back(), 0.97 * plain.front());  // it trains (0.509 -> 0.482 seen)
}

}  // namespace
}  // namespace tandem
