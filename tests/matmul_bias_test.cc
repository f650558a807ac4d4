// The CPU's MatMul + bias rewrite (providers/cpu/rewrites/matmul_bias.h): outputs against a float64
// reference and against the same graph with fusion off, for the small-product, skinny and
// oneDNN paths, both Add operand orders, a 1-D A and an activation after the Add; and the
// cases it must leave alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace tandem::testing {
namespace {

Tensor Values(const Dims& dims, double phase) {
  std::vector<float> v(static_cast<size_t>(NumElements(dims)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(std::sin(0.31 * static_cast<double>(i) + phase));
  return Tensor::FromVector(v, dims);
}

struct Case {
  Dims a, b, bias;
  bool bias_first = false;   // Add(bias, Y) instead of Add(Y, bias)
  bool y_is_output = false;  // Y also a graph output: must stay apart
  std::string act = "";      // an activation reading z (its output the graph's), or none
  bool z_is_output = false;  // with act: z also a graph output, so the activation stays apart
};

// x -> MatMul(x, W) -> Add with bias -> z [-> act -> o] (a graph input x, constants W and
// bias; the graph's first output is o where there is an activation, else z).
Graph MatMulAddGraph(const Case& c) {
  Graph g;
  g.name = "matmul_add";
  g.opsets[""] = 13;
  g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of(c.a)});
  g.initializers["w"] = Values(c.b, 0.5);
  g.initializers["bias"] = Values(c.bias, 1.5);
  Node mm;
  mm.name = "mm";
  mm.op_type = "MatMul";
  mm.inputs = {"x", "w"};
  mm.outputs = {"y"};
  Node add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = c.bias_first ? std::vector<std::string>{"bias", "y"} : std::vector<std::string>{"y", "bias"};
  add.outputs = {"z"};
  g.nodes = {mm, add};
  g.value_info["y"] = ValueInfo{"y", DataType::kFloat, Shape::Unknown()};
  if (!c.act.empty()) {
    Node act;
    act.name = "act";
    act.op_type = c.act;
    act.inputs = {"z"};
    act.outputs = {"o"};
    if (c.act == "LeakyRelu") {
      Attribute alpha;
      alpha.kind = Attribute::Kind::kFloat;
      alpha.f = 0.2f;
      act.attributes["alpha"] = alpha;
    }
    g.nodes.push_back(act);
    g.value_info["z"] = ValueInfo{"z", DataType::kFloat, Shape::Unknown()};
    g.outputs.push_back(ValueInfo{"o", DataType::kFloat, Shape::Unknown()});
  }
  if (c.act.empty() || c.z_is_output) g.outputs.push_back(ValueInfo{"z", DataType::kFloat, Shape::Unknown()});
  if (c.y_is_output) g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Unknown()});
  return g;
}

// The activation in double, as ONNX defines it.
double Activate(const std::string& act, double v) {
  if (act == "Relu") return v > 0 ? v : 0;
  if (act == "LeakyRelu") return v > 0 ? v : 0.2 * v;
  if (act == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (act == "Tanh") return std::tanh(v);
  return v;
}

// z = x @ W + bias in double (A's batch dims folded into rows; 1-D A is one row).
std::vector<double> Reference(const Tensor& x, const Tensor& w, const Tensor& bias) {
  const int64_t k = w.dim(0), n = w.dim(1), rows = x.numel() / k;
  std::vector<double> z(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t q = 0; q < k; ++q)
        acc += static_cast<double>(x.data<float>()[r * k + q]) * w.data<float>()[q * n + j];
      z[static_cast<size_t>(r * n + j)] = acc + bias.data<float>()[j % bias.numel()];
    }
  return z;
}

struct Ran {
  std::vector<Tensor> out;
  int rewritten = 0;
  std::vector<Node> nodes;  // the graph as run
};

Ran RunGraph(const Case& c, bool fusion) {
  SessionOptions o;
  o.fusion = fusion;
  o.num_threads = 2;
  auto s = Session::FromGraph(MatMulAddGraph(c), o);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  auto out = (*s)->Run({{"x", Values(c.a, 0.0)}});
  EXPECT_TRUE(out.ok()) << out.status();
  return {out.ok() ? *out : std::vector<Tensor>{}, (*s)->stats().nodes_provider_rewritten, (*s)->graph().nodes};
}

TEST(MatMulBias, FoldedAddMatchesReferenceAndUnfusedGraph) {
  const std::vector<Case> cases = {
      {{2, 5, 16}, {16, 24}, {24}},                // small product (direct loops)
      {{4, 64, 64}, {64, 96}, {96}},               // oneDNN matmul with a bias
      {{4, 64, 64}, {64, 96}, {96}, true},         // Add(bias, Y)
      {{16}, {16, 24}, {24}},                      // 1-D A
      {{3, 2, 40, 128}, {128, 512}, {512}, true},  // rank-4 A
  };
  for (const Case& c : cases) {
    const std::string what = DimsToString(c.a) + " x " + DimsToString(c.b);
    Ran fused = RunGraph(c, true), plain = RunGraph(c, false);
    ASSERT_EQ(fused.out.size(), 1u) << what;
    ASSERT_EQ(plain.out.size(), 1u) << what;
    EXPECT_GE(fused.rewritten, 1) << what << ": the Add was not folded";
    EXPECT_EQ(plain.rewritten, 0) << what;
    const Tensor& z = fused.out[0];
    ASSERT_EQ(z.dims(), plain.out[0].dims()) << what;
    std::vector<double> want = Reference(Values(c.a, 0.0), Values(c.b, 0.5), Values(c.bias, 1.5));
    ASSERT_EQ(static_cast<size_t>(z.numel()), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(z.data<float>()[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
      ASSERT_NEAR(z.data<float>()[i], plain.out[0].data<float>()[i], 1e-4 * (1 + std::fabs(want[i])))
          << what << " at " << i;
    }
  }
}

// The activation after the Add becomes the FusedMatMul's: one node left, its output right
// against float64 on each product path.
TEST(MatMulBias, FoldsTheActivationAfterTheAdd) {
  const std::vector<Case> cases = {
      {{2, 5, 16}, {16, 24}, {24}, false, false, "Tanh"},          // small product (direct loops)
      {{2, 512}, {512, 256}, {256}, false, false, "Sigmoid"},      // two rows: the skinny path
      {{4, 64, 64}, {64, 96}, {96}, false, false, "Relu"},         // oneDNN matmul, bias + eltwise post-ops
      {{1, 64, 128}, {128, 256}, {256}, true, false, "LeakyRelu"}, // a transformer's feed-forward shape
  };
  for (const Case& c : cases) {
    const std::string what = c.act + " after " + DimsToString(c.a) + " x " + DimsToString(c.b);
    Ran fused = RunGraph(c, true), plain = RunGraph(c, false);
    ASSERT_EQ(fused.out.size(), 1u) << what;
    ASSERT_EQ(plain.out.size(), 1u) << what;
    EXPECT_EQ(fused.rewritten, 2) << what << ": the Add and the activation";
    ASSERT_EQ(fused.nodes.size(), 1u) << what;
    EXPECT_EQ(fused.nodes[0].op_type, "FusedMatMul") << what;
    EXPECT_EQ(fused.nodes[0].attr_string("activation", ""), c.act) << what;
    std::vector<double> want = Reference(Values(c.a, 0.0), Values(c.b, 0.5), Values(c.bias, 1.5));
    double scale = 0;
    for (double& v : want) scale = std::max(scale, std::fabs(v = Activate(c.act, v)));
    const Tensor& o = fused.out[0];
    ASSERT_EQ(static_cast<size_t>(o.numel()), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(o.data<float>()[i], want[i], 1e-5 * scale) << what << " at " << i;
      ASSERT_NEAR(o.data<float>()[i], plain.out[0].data<float>()[i], 1e-5 * scale) << what << " at " << i;
    }
  }
}

// An activation whose input is also a graph output stays a node of its own (the bias is
// still folded).
TEST(MatMulBias, LeavesAnActivationWhoseInputIsAnOutput) {
  const Case c{{4, 64, 64}, {64, 96}, {96}, false, false, "Relu", true};
  Ran fused = RunGraph(c, true);
  EXPECT_EQ(fused.rewritten, 1);
  ASSERT_EQ(fused.nodes.size(), 2u);
  EXPECT_EQ(fused.nodes[0].attr_string("activation", ""), "");
  EXPECT_EQ(fused.nodes[1].op_type, "Relu");
  ASSERT_EQ(fused.out.size(), 2u);
  std::vector<double> want = Reference(Values(c.a, 0.0), Values(c.b, 0.5), Values(c.bias, 1.5));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(fused.out[1].data<float>()[i], want[i], 1e-4 * (1 + std::fabs(want[i])));
    ASSERT_NEAR(fused.out[0].data<float>()[i], Activate("Relu", want[i]), 1e-4 * (1 + std::fabs(want[i])));
  }
}

TEST(MatMulBias, LeavesOtherPatternsAlone) {
  // A [1, N] bias (could change a 1-D Y's rank) and a Y that is also a graph output.
  for (const Case& c : {Case{{4, 16}, {16, 24}, {1, 24}}, Case{{4, 16}, {16, 24}, {24}, false, true}}) {
    Ran fused = RunGraph(c, true);
    EXPECT_EQ(fused.rewritten, 0) << DimsToString(c.bias);
    ASSERT_FALSE(fused.out.empty());
    std::vector<double> want = Reference(Values(c.a, 0.0), Values(c.b, 0.5), Values(c.bias, 1.5));
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(fused.out[0].data<float>()[i], want[i], 1e-4 * (1 + std::fabs(want[i])));
  }
}

}  // namespace
}  // namespace tandem::testing
