// Every gradient rule against float64 central finite differences.
#include <gtest/gtest.h>

#include "tests/gradient_check.h"
#include "training/gradient_rules.h"

namespace tandem::testing {
namespace {

GradCase Binary(const std::string& op, Dims a, Dims b) {
  GradCase c;
  c.op = op;
  c.inputs = {RandomDoubles(a, 1, 0.5, 2.0), RandomDoubles(b, 2, 0.5, 2.0)};
  return c;
}

TEST(GradientRules, AddWithBroadcast) { EXPECT_EQ(CheckGradients(Binary("Add", {2, 3, 4}, {3, 1})), ""); }
TEST(GradientRules, SubWithBroadcast) { EXPECT_EQ(CheckGradients(Binary("Sub", {4}, {2, 3, 4})), ""); }
TEST(GradientRules, MulWithBroadcast) { EXPECT_EQ(CheckGradients(Binary("Mul", {2, 3, 4}, {1, 4})), ""); }
TEST(GradientRules, DivWithBroadcast) { EXPECT_EQ(CheckGradients(Binary("Div", {2, 3}, {3})), ""); }

TEST(GradientRules, Neg) {
  GradCase c;
  c.op = "Neg";
  c.inputs = {RandomDoubles({3, 5}, 3)};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRules, Relu) {
  GradCase c;
  c.op = "Relu";
  c.inputs = {RandomDoubles({4, 6}, 4)};
  EXPECT_EQ(CheckGradients(c), "");
}

// A 2-D B of known dims (a linear layer) takes the Gemm-on-rows rule (training/rules/linear.cc);
// batched and broadcast B the batched products with transposed operands.
TEST(GradientRules, MatMulBatched) { EXPECT_EQ(CheckGradients(Binary("MatMul", {2, 3, 4}, {4, 5})), ""); }
TEST(GradientRules, MatMulLinearLayers) {
  EXPECT_EQ(CheckGradients(Binary("MatMul", {3, 4}, {4, 5})), "");
  EXPECT_EQ(CheckGradients(Binary("MatMul", {2, 2, 3, 4}, {4, 5})), "");
}
TEST(GradientRules, MatMulBatchedAndBroadcastOperands) {
  EXPECT_EQ(CheckGradients(Binary("MatMul", {2, 3, 4}, {2, 4, 5})), "");
  EXPECT_EQ(CheckGradients(Binary("MatMul", {2, 1, 3, 4}, {3, 4, 5})), "");
}

TEST(GradientRules, GemmAllTranspositions) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      GradCase c;
      c.op = "Gemm";
      c.inputs = {RandomDoubles(ta ? Dims{4, 3} : Dims{3, 4}, 5),
                  RandomDoubles(tb ? Dims{5, 4} : Dims{4, 5}, 6), RandomDoubles({5}, 7)};
      c.attributes = {{"transA", IntAttr(ta)}, {"transB", IntAttr(tb)},
                      {"alpha", FloatAttr(0.5f)}, {"beta", FloatAttr(2.0f)}};
      EXPECT_EQ(CheckGradients(c), "") << "transA=" << ta << " transB=" << tb;
    }
}

TEST(GradientRules, MissingRuleNamesOpAndNode) {
  GradCase c;
  c.op = "Hardmax";
  c.inputs = {RandomDoubles({2, 3}, 8)};
  std::string err = CheckGradients(c);
  EXPECT_NE(err.find("no gradient rule for op Hardmax"), std::string::npos) << err;
  EXPECT_NE(err.find("'under_test'"), std::string::npos) << err;
}

}  // namespace
}  // namespace tandem::testing

namespace tandem::testing {
namespace {

GradCase Reduce(const std::string& op, std::vector<int64_t> axes, int64_t keepdims) {
  GradCase c;
  c.op = op;
  c.opset = 13;
  c.inputs = {RandomDoubles({2, 3, 4}, 9)};
  if (op != "ReduceSum") {
    c.attributes["axes"] = IntsAttr(axes);
  } else if (!axes.empty()) {
    c.inputs.push_back(Tensor::FromVector<int64_t>(axes, {static_cast<int64_t>(axes.size())}));
  }
  c.attributes["keepdims"] = IntAttr(keepdims);
  return c;
}

TEST(GradientRules, ReduceSumAxesAndKeepdims) {
  EXPECT_EQ(CheckGradients(Reduce("ReduceSum", {1}, 0)), "");
  EXPECT_EQ(CheckGradients(Reduce("ReduceSum", {0, 2}, 1)), "");
  EXPECT_EQ(CheckGradients(Reduce("ReduceSum", {}, 0)), "");
}

TEST(GradientRules, ReduceMaxMinAxesAndKeepdims) {
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    EXPECT_EQ(CheckGradients(Reduce(op, {1}, 0)), "") << op;
    EXPECT_EQ(CheckGradients(Reduce(op, {0, 2}, 1)), "") << op;
    GradCase all = Reduce(op, {}, 0);
    all.attributes.erase("axes");
    EXPECT_EQ(CheckGradients(all), "") << op << " over all axes";
    GradCase v18 = Reduce(op, {}, 0);  // opset 18: axes as an input
    v18.opset = 18;
    v18.attributes.erase("axes");
    v18.inputs.push_back(Tensor::FromVector<int64_t>({-1}, {1}));
    EXPECT_EQ(CheckGradients(v18), "") << op << " opset 18";
  }
}

TEST(GradientRules, ReduceMeanAxesAndKeepdims) {
  EXPECT_EQ(CheckGradients(Reduce("ReduceMean", {-1}, 0)), "");
  EXPECT_EQ(CheckGradients(Reduce("ReduceMean", {0, 1}, 1)), "");
}

}  // namespace
}  // namespace tandem::testing
