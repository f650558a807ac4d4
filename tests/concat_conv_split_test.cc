// Channel Concats read by convolutions, split into per-part convolutions whose sums the CPU
// folds (optimizer/onnx_rewrites/concat_conv_split.h): a fire-module graph runs with no
// Concat but the one a widening convolution reads and no Add, and gives the outputs of the
// same graph run with its Concats (fusion off), under each convolution layout. The pass
// alone leaves the Concats it must keep.
#include <gtest/gtest.h>

#include <map>

#include "optimizer/onnx_rewrites/concat_conv_split.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// x[2,8,9,9] -> e1 = Relu(Conv 12 1x1), e3 = Relu(Conv 20 3x3): the fire module's two
// expands. Then
//   squeeze: Relu(Conv 6 1x1 + bias of Concat(e1, e3))            -> y  (split, 2 parts)
//   pooled:  Conv 5 3x3 of MaxPool 3x3/2 of Concat(e3, e1, e1)    -> p  (split through the pool, 3 parts)
//   widen:   Conv 40 1x1 of Concat(e1, e3)                        -> z  (more outputs than inputs: kept)
onnx::ModelProto FireModel() {
  onnx::ModelProto m = EmptyModel(13, "fire");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 8, 9, 9});
  AddFloatInitializer(g, "w1", {12, 8, 1, 1}, 0.05f);
  AddFloatInitializer(g, "w3", {20, 8, 3, 3}, 0.03f, 0.002f);
  AddFloatInitializer(g, "ws", {6, 32, 1, 1}, 0.04f, -0.001f);
  AddFloatInitializer(g, "bs", {6}, 0.1f);
  AddFloatInitializer(g, "wp", {5, 44, 3, 3}, 0.02f);
  AddFloatInitializer(g, "wz", {40, 32, 1, 1}, 0.03f);
  AddPaddedConv(g, "expand1", {"x", "w1"}, "c1", 0);
  AddNode(g, "Relu", "relu1", {"c1"}, {"e1"});
  AddPaddedConv(g, "expand3", {"x", "w3"}, "c3", 1);
  AddNode(g, "Relu", "relu3", {"c3"}, {"e3"});
  AddIntAttribute(AddNode(g, "Concat", "concat_s", {"e1", "e3"}, {"joined_s"}), "axis", 1);
  AddPaddedConv(g, "squeeze", {"joined_s", "ws", "bs"}, "cs", 0);
  AddNode(g, "Relu", "relu_s", {"cs"}, {"y"});
  AddIntAttribute(AddNode(g, "Concat", "concat_p", {"e3", "e1", "e1"}, {"joined_p"}), "axis", -3);
  auto* pool = AddNode(g, "MaxPool", "pool", {"joined_p"}, {"pooled"});
  AddIntsAttribute(pool, "kernel_shape", {3, 3});
  AddIntsAttribute(pool, "strides", {2, 2});
  AddPaddedConv(g, "conv_p", {"pooled", "wp"}, "p", 1);
  AddIntAttribute(AddNode(g, "Concat", "concat_z", {"e1", "e3"}, {"joined_z"}), "axis", 1);
  AddPaddedConv(g, "widen", {"joined_z", "wz"}, "z", 0);
  SetFloatType(g->add_output(), "y", {2, 6, 9, 9});
  SetFloatType(g->add_output(), "p", {2, 5, 4, 4});
  SetFloatType(g->add_output(), "z", {2, 40, 9, 9});
  return m;
}

class ConcatConvSplit : public ::testing::TestWithParam<const char*> {};

TEST_P(ConcatConvSplit, MatchesTheGraphWithItsConcats) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  auto split = LoadTestModel(FireModel(), true), plain = LoadTestModel(FireModel(), false);
  ASSERT_TRUE(split && plain);
  auto counts = OpCounts(split->graph());
  EXPECT_EQ(counts["Concat"], 1) << "only the widening convolution's";
  EXPECT_EQ(counts["Add"], 0) << "every part's sum is folded into a convolution";
  EXPECT_EQ(counts["MaxPool"], 3) << "one pool per part";
  EXPECT_EQ(OpCounts(plain->graph())["Concat"], 3);
  ExpectSameOutputs(*split, *plain, {2, 8, 9, 9});
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConcatConvSplit, ::testing::Values("nhwc", "nChw16c", "nchw"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });



TEST(ConcatConvSplitPass, SlicesTheWeightsByInputChannel) {
  Graph g = ImportTestModel(FireModel());
  EXPECT_EQ(SplitConcatIntoConvs(g), 2);
  ASSERT_TRUE(g.Validate().ok());
  EXPECT_EQ(g.initializers.count("ws"), 0u) << "the unsplit weights go";
  std::map<std::string, const Node*> by_name;
  for (const Node& n : g.nodes) by_name[n.name] = &n;
  const Node* s0 = by_name["squeeze/part0"];
  const Node* s1 = by_name["squeeze/part1"];
  ASSERT_TRUE(s0 && s1);
  EXPECT_EQ(s0->inputs.size(), 3u) << "the bias goes with the first part";
  EXPECT_EQ(s1->inputs.size(), 2u);
  const Tensor& w0 = g.initializers.at(s0->inputs[1]);
  const Tensor& w1 = g.initializers.at(s1->inputs[1]);
  ASSERT_EQ(w0.dims(), (Dims{6, 12, 1, 1}));
  ASSERT_EQ(w1.dims(), (Dims{6, 20, 1, 1}));
  // ws[m, c] is the initializer's value m * 32 + c.
  auto ws = [](int64_t m, int64_t c) { return InitializerValue(m * 32 + c, 0.04f, -0.001f); };
  for (int64_t m = 0; m < 6; ++m) {
    for (int64_t c = 0; c < 12; ++c) EXPECT_FLOAT_EQ(w0.data<float>()[m * 12 + c], ws(m, c));
    for (int64_t c = 0; c < 20; ++c) EXPECT_FLOAT_EQ(w1.data<float>()[m * 20 + c], ws(m, 12 + c));
  }
  const Node* p2 = by_name["conv_p/part2"];
  ASSERT_TRUE(p2);
  const ValueInfo* pooled = g.FindValueInfo(p2->inputs[0]);
  ASSERT_TRUE(pooled);
  EXPECT_EQ(pooled->shape.ToString(), "[2,12,4,4]") << "the part's pool output";
  EXPECT_EQ(g.initializers.at(p2->inputs[1]).dims(), (Dims{5, 12, 3, 3}));
}

TEST(ConcatConvSplitPass, KeepsConcatsItCannotSplit) {
  {  // the Concat has another reader
    onnx::ModelProto m = FireModel();
    SetFloatType(m.mutable_graph()->add_output(), "joined_s", {2, 32, 9, 9});
    Graph g = ImportTestModel(m);
    EXPECT_EQ(SplitConcatIntoConvs(g), 1) << "only conv_p's";
  }
  {  // a part's channel count is not known
    Graph g = ImportTestModel(FireModel());
    g.value_info.erase("e1");
    EXPECT_EQ(SplitConcatIntoConvs(g), 0);
  }
  {  // a grouped convolution is not a sum over all input channels
    onnx::ModelProto m = FireModel();
    for (auto& n : *m.mutable_graph()->mutable_node())
      if (n.name() == "squeeze") AddIntAttribute(&n, "group", 2);
    AddFloatInitializer(m.mutable_graph(), "ws_grouped", {6, 16, 1, 1}, 0.04f);
    for (auto& n : *m.mutable_graph()->mutable_node())
      if (n.name() == "squeeze") n.set_input(1, "ws_grouped");
    Graph g = ImportTestModel(m);
    EXPECT_EQ(SplitConcatIntoConvs(g), 1) << "only conv_p's";
  }
}

}  // namespace
}  // namespace tandem
