// The exporters' GroupNorm + SiLU folded into one FusedGroupNorm on the CPU
// (providers/cpu/rewrites/group_norm.h) and run on the convolutions' blocked maps: a VAE-like
// block gives the outputs of the same graph run unfused (InstanceNormalization, Mul, Add,
// Sigmoid and Mul on their own kernels), under each layout forced through
// TANDEM_CPU_CONV_LAYOUT, with no conversion between the convolutions; without static
// shapes the Reshapes are recognized by their targets; an InstanceNormalization whose scale
// is not one stays, and a normalization whose result is also a graph output keeps its SiLU.
// (tests/op_reference/norm_cases.py checks the fused kernel against onnx.reference in
// float64.)
#include <gtest/gtest.h>

#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// x[2,3,10,12] -> Conv 32 = c0 -> GroupNorm(8 groups) = gn -> SiLU -> Conv 16 = y. With
// `unit_scale` false the InstanceNormalization's scale is 2; with `gn_out` gn is an output
// too; with `any_size` x's height and width are symbolic and the Reshape back takes
// Shape(c0), as the TorchScript exporter writes it (no static shapes to go by).
onnx::ModelProto VaeBlockModel(bool unit_scale, bool gn_out, bool any_size = false) {
  onnx::ModelProto m = EmptyModel(17, "vae_block");
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  SetFloatType(x, "x", {2, 3, 10, 12});
  if (any_size) {
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_param("h");
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(3)->set_dim_param("w");
  }
  AddFloatInitializer(g, "w0", {32, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "w1", {16, 32, 3, 3}, 0.03f);
  AddInt64Initializer(g, "grouped", {2, 8, -1});
  AddInt64Initializer(g, "full", {2, 32, 10, 12});
  AddFloatInitializer(g, "ones", {8}, 0.f, unit_scale ? 1.f : 2.f);
  AddFloatInitializer(g, "zeros", {8}, 0.f);
  AddFloatInitializer(g, "gamma", {32, 1, 1}, 0.1f, 1.f);
  AddFloatInitializer(g, "beta", {32, 1, 1}, 0.05f);
  AddPaddedConv(g, "conv0", {"x", "w0"}, "c0", 1);
  AddNode(g, "Reshape", "split", {"c0", "grouped"}, {"grouped_c0"});
  AddNode(g, "InstanceNormalization", "norm", {"grouped_c0", "ones", "zeros"}, {"normed"});
  if (any_size) AddNode(g, "Shape", "shape", {"c0"}, {"c0_shape"});
  AddNode(g, "Reshape", "merge", {"normed", any_size ? "c0_shape" : "full"}, {"merged"});
  AddNode(g, "Mul", "scale", {"merged", "gamma"}, {"scaled"});
  AddNode(g, "Add", "shift", {"scaled", "beta"}, {"gn"});
  AddNode(g, "Sigmoid", "gate", {"gn"}, {"gate"});
  AddNode(g, "Mul", "silu", {"gn", "gate"}, {"act"});
  AddPaddedConv(g, "conv1", {"act", "w1"}, "y", 1);
  SetFloatType(g->add_output(), "y", {2, 16, 10, 12});
  if (gn_out) SetFloatType(g->add_output(), "gn", {2, 32, 10, 12});
  return m;
}

class GroupNormFusion : public ::testing::TestWithParam<const char*> {};

TEST_P(GroupNormFusion, VaeBlockMatchesTheUnfusedGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  auto fused = LoadTestModel(VaeBlockModel(true, false), true);
  auto plain = LoadTestModel(VaeBlockModel(true, false), false);
  ASSERT_TRUE(fused && plain);
  auto ops = OpCounts(fused->graph());
  EXPECT_EQ(ops["FusedGroupNorm"], 1);
  EXPECT_EQ(ops["InstanceNormalization"] + ops["Reshape"] + ops["Mul"] + ops["Add"] + ops["Sigmoid"], 0);
  // blocked layouts: one conversion, of the last convolution's output
  EXPECT_EQ(ops["FromBlocked"], std::string(GetParam()) == "nchw" ? 0 : 1);
  for (const Node& n : fused->graph().nodes)
    if (n.op_type == "FusedGroupNorm") EXPECT_EQ(n.attr_string("activation", ""), "Swish");
  ExpectSameOutputs(*fused, *plain, {2, 3, 10, 12});
}

INSTANTIATE_TEST_SUITE_P(Layouts, GroupNormFusion, ::testing::Values("nhwc", "nChw16c", "nChw8c", "nchw"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(GroupNormFusionAnySize, FoldsByTheReshapeTargets) {
  auto fused = LoadTestModel(VaeBlockModel(true, false, true), true);
  auto plain = LoadTestModel(VaeBlockModel(true, false, true), false);
  ASSERT_TRUE(fused && plain);
  auto ops = OpCounts(fused->graph());
  EXPECT_EQ(ops["FusedGroupNorm"], 1);
  EXPECT_EQ(ops["InstanceNormalization"] + ops["Reshape"] + ops["Shape"] + ops["Sigmoid"], 0);
  ExpectSameOutputs(*fused, *plain, {2, 3, 10, 12});
}

TEST(GroupNormFusionKept, AScaledInstanceNormStays) {
  auto fused = LoadTestModel(VaeBlockModel(false, false), true);
  ASSERT_TRUE(fused);
  auto ops = OpCounts(fused->graph());
  EXPECT_EQ(ops["FusedGroupNorm"], 0);
  EXPECT_EQ(ops["InstanceNormalization"], 1);
}

TEST(GroupNormFusionKept, ANormalizationReadOutsideKeepsItsSiLU) {
  // gn is a graph output: the normalization and its affine part still fold, the SiLU stays.
  auto fused = LoadTestModel(VaeBlockModel(true, true), true);
  auto plain = LoadTestModel(VaeBlockModel(true, true), false);
  ASSERT_TRUE(fused && plain);
  auto ops = OpCounts(fused->graph());
  EXPECT_EQ(ops["FusedGroupNorm"], 1);
  EXPECT_EQ(ops["Sigmoid"], 1);
  ExpectSameOutputs(*fused, *plain, {2, 3, 10, 12});
}

}  // namespace
}  // namespace tandem
