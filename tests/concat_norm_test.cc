// Concat + BatchNormalization [+ Relu] folded into ConcatBatchNorm on the CPU's channel-
// blocked layout (providers/cpu/rewrites/concat_norm.h): a densenet-like block gives the outputs of
// the same graph run plain (fusion off), under each layout forced through
// TANDEM_CPU_CONV_LAYOUT; a Concat that something else reads too is kept; nothing is
// folded without the blocked layout.
#include <gtest/gtest.h>

#include <map>

#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// x[2,3,12,12] -> Conv 16 = f0 -> Conv 16 = f1; Concat(f0, f1) -> BN + Relu -> Conv 1x1 16 = y;
// Concat(f1, y, f0) -> BN = z (an output); Concat(f0, y) = k (an output) -> BN = u (an output).
onnx::ModelProto DenseBlockModel() {
  onnx::ModelProto m = EmptyModel(13, "dense_block");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 12, 12});
  AddFloatInitializer(g, "w0", {16, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "w1", {16, 16, 3, 3}, 0.03f);
  AddFloatInitializer(g, "w2", {16, 32, 1, 1}, 0.04f);
  AddPaddedConv(g, "conv0", {"x", "w0"}, "f0", 1);
  AddPaddedConv(g, "conv1", {"f0", "w1"}, "f1", 1);
  AddIntAttribute(AddNode(g, "Concat", "cat1", {"f0", "f1"}, {"c1"}), "axis", 1);
  AddInferenceBatchNorm(g, "bn1", "c1", "n1", 32);
  AddNode(g, "Relu", "relu1", {"n1"}, {"r1"});
  AddNode(g, "Conv", "conv2", {"r1", "w2"}, {"y"});
  AddIntAttribute(AddNode(g, "Concat", "cat2", {"f1", "y", "f0"}, {"c2"}), "axis", -3);
  AddInferenceBatchNorm(g, "bn2", "c2", "z", 48);
  AddIntAttribute(AddNode(g, "Concat", "cat3", {"f0", "y"}, {"k"}), "axis", 1);
  AddInferenceBatchNorm(g, "bn3", "k", "u", 32);
  SetFloatType(g->add_output(), "z", {2, 48, 12, 12});
  SetFloatType(g->add_output(), "k", {2, 32, 12, 12});
  SetFloatType(g->add_output(), "u", {2, 32, 12, 12});
  return m;
}

class ConcatNorm : public ::testing::TestWithParam<const char*> {};

TEST_P(ConcatNorm, DenseBlockMatchesThePlainGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  auto fused = LoadTestModel(DenseBlockModel(), true), plain = LoadTestModel(DenseBlockModel(), false);
  ASSERT_TRUE(fused && plain);
  auto ops = OpCounts(fused->graph());
  EXPECT_EQ(ops["ConcatBatchNorm"], 2);  // cat1 + bn1 (+ relu1), cat2 + bn2
  EXPECT_EQ(ops["Concat"], 1);           // cat3: k is returned too
  EXPECT_EQ(ops["BatchNormalization"], 1);
  EXPECT_EQ(ops["Relu"], 0);
  bool relu_kept = false;
  for (const Node& n : fused->graph().nodes)
    if (n.op_type == "ConcatBatchNorm" && n.inputs.size() == 6) relu_kept = n.attr_string("activation", "") == "Relu";
  EXPECT_TRUE(relu_kept) << "cat1 + bn1 carries the folded Relu";
  ExpectSameOutputs(*fused, *plain, {2, 3, 12, 12});
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConcatNorm, ::testing::Values("nhwc", "nChw16c", "nChw8c"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(ConcatNormPlain, NothingFoldedWithoutTheBlockedLayout) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", "nchw");
  auto fused = LoadTestModel(DenseBlockModel(), true);
  ASSERT_TRUE(fused);
  auto ops = OpCounts(fused->graph());
  EXPECT_EQ(ops["ConcatBatchNorm"], 0);
  EXPECT_EQ(ops["Concat"], 3);
}

}  // namespace
}  // namespace tandem
