// Residual sums folded into the CPU's convolutions (providers/cpu/rewrites/conv_sum.h): a graph of
// residual joins runs with its Adds and Relus inside FusedConv nodes and gives the outputs
// of the same graph run unfused (separate Conv, Add and Relu kernels), under each
// convolution layout; the sums that may reuse s's buffer do, the others do not.
#include <gtest/gtest.h>

#include <map>

#include "onnx_import/import.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/rewrites/conv_sum.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// x[2,3,10,10] -> Conv+Relu = s -> Conv+Relu -> Conv = c2; Add(c2, s) -> Relu = r1 (an
// identity block: s's last reader is the Add);
// Conv 24 (3x3) of r1 = ca, Conv 24 (1x1) of r1 = cb, Add(cb, ca) -> Relu = r2 (a projection
// block: ca, the convolution folded, is written before cb, its s);
// Add(Conv(r2), r2) = y (the convolution reads s itself: no reuse of s's buffer);
// Add(Conv(r2), k[1,24,1,1]) = z (a broadcast, of a constant per channel: not a residual sum,
// the Session folds it into convd's bias, optimizer/onnx_rewrites/bias_folding.h).
// conva and convc are dilated by 2, so that the Session does not merge the branches of r1,
// or convc and its input, into one convolution (optimizer/onnx_rewrites/conv_branch_merging.h).
onnx::ModelProto ResidualModel() {
  onnx::ModelProto m = EmptyModel(13, "residual");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 10, 10});
  AddFloatInitializer(g, "w0", {16, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "w1", {16, 16, 3, 3}, 0.02f);
  AddFloatInitializer(g, "w2", {16, 16, 3, 3}, 0.03f, 0.001f);
  AddFloatInitializer(g, "wa", {24, 16, 3, 3}, 0.02f);
  AddFloatInitializer(g, "wb", {24, 16, 1, 1}, 0.04f);
  AddFloatInitializer(g, "wc", {24, 24, 3, 3}, 0.02f);
  AddFloatInitializer(g, "wd", {24, 24, 1, 1}, 0.03f);
  AddFloatInitializer(g, "k", {1, 24, 1, 1}, 0.1f);
  AddPaddedConv(g, "conv0", {"x", "w0"}, "c0", 1);
  AddNode(g, "Relu", "relu0", {"c0"}, {"s"});
  AddPaddedConv(g, "conv1", {"s", "w1"}, "c1", 1);
  AddNode(g, "Relu", "relu1", {"c1"}, {"t"});
  AddPaddedConv(g, "conv2", {"t", "w2"}, "c2", 1);
  AddNode(g, "Add", "add1", {"c2", "s"}, {"a1"});
  AddNode(g, "Relu", "relu2", {"a1"}, {"r1"});
  AddIntsAttribute(AddPaddedConv(g, "conva", {"r1", "wa"}, "ca", 2), "dilations", {2, 2});
  AddPaddedConv(g, "convb", {"r1", "wb"}, "cb", 0);
  AddNode(g, "Add", "add2", {"cb", "ca"}, {"a2"});
  AddNode(g, "Relu", "relu3", {"a2"}, {"r2"});
  AddIntsAttribute(AddPaddedConv(g, "convc", {"r2", "wc"}, "cc", 2), "dilations", {2, 2});
  AddNode(g, "Add", "add3", {"cc", "r2"}, {"y"});
  AddPaddedConv(g, "convd", {"r2", "wd"}, "cd", 0);
  AddNode(g, "Add", "add4", {"cd", "k"}, {"z"});
  SetFloatType(g->add_output(), "y", {2, 24, 10, 10});
  SetFloatType(g->add_output(), "z", {2, 24, 10, 10});
  return m;
}

// x[2,3,6,6] -> Conv+Relu = s; Conv A of s = a; Conv B of x = b; Add(b, s) = t;
// Add(a, t) = u. Both joins fold and move to their Add's place: B's sum (onto s) then runs
// before A reads s, so only A's (onto t) may write in place.
onnx::ModelProto MovedReaderModel() {
  onnx::ModelProto m = EmptyModel(13, "moved_reader");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 6, 6});
  AddFloatInitializer(g, "w0", {8, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "wa", {8, 8, 3, 3}, 0.03f);
  AddFloatInitializer(g, "wb", {8, 3, 3, 3}, 0.02f, 0.001f);
  AddPaddedConv(g, "conv0", {"x", "w0"}, "c0", 1);
  AddNode(g, "Relu", "relu", {"c0"}, {"s"});
  AddPaddedConv(g, "conv_a", {"s", "wa"}, "a", 1);
  AddPaddedConv(g, "conv_b", {"x", "wb"}, "b", 1);
  AddNode(g, "Add", "add_t", {"b", "s"}, {"t"});
  AddNode(g, "Add", "add_u", {"a", "t"}, {"u"});
  SetFloatType(g->add_output(), "u", {2, 8, 6, 6});
  return m;
}

std::unique_ptr<Session> Load(bool fusion, const onnx::ModelProto& model = ResidualModel()) {
  return LoadTestModel(model, fusion);
}

class ConvResidualSum : public ::testing::TestWithParam<const char*> {};

TEST_P(ConvResidualSum, MatchesTheUnfusedGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  auto fused = Load(true), plain = Load(false);
  ASSERT_TRUE(fused && plain);
  std::map<std::string, const Node*> by_name;
  int adds = 0, relus = 0;
  for (const Node& n : fused->graph().nodes) {
    by_name[n.name] = &n;
    adds += n.op_type == "Add";
    relus += n.op_type == "Relu";
  }
  EXPECT_EQ(adds, 0) << "the broadcast Add of a constant becomes convd's bias";
  ASSERT_TRUE(by_name.count("convd"));
  EXPECT_EQ(by_name["convd"]->inputs.size(), 3u);
  EXPECT_EQ(relus, 0);
  const Node* add1 = by_name["conv2+add1+relu2"];
  const Node* add2 = by_name["conva+add2+relu3"];
  const Node* add3 = by_name["convc+add3"];
  ASSERT_TRUE(add1 && add2 && add3);
  EXPECT_EQ(add1->attr_string("sum_activation", ""), "Relu");
  EXPECT_EQ(add3->attr_string("sum_activation", ""), "");
  EXPECT_EQ(add1->attr_int("sum_in_place", 0), 1);
  EXPECT_EQ(add2->attr_int("sum_in_place", 0), 1);
  EXPECT_EQ(add3->attr_int("sum_in_place", 0), 0) << "its convolution reads s";

  const int64_t in_place_before = cpu::ResidualSumsInPlace();
  ExpectSameOutputs(*fused, *plain, {2, 3, 10, 10});
  EXPECT_EQ(cpu::ResidualSumsInPlace() - in_place_before, 2);
}

TEST_P(ConvResidualSum, ASumBeforeALaterReaderOfSIsNotInPlace) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  auto fused = Load(true, MovedReaderModel()), plain = Load(false, MovedReaderModel());
  ASSERT_TRUE(fused && plain);
  std::map<std::string, const Node*> by_name;
  for (const Node& n : fused->graph().nodes) by_name[n.name] = &n;
  const Node* b = by_name["conv_b+add_t"];
  const Node* a = by_name["conv_a+add_u"];
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->attr_int("sum_in_place", 0), 0) << "conv_a reads s after it";
  EXPECT_EQ(a->attr_int("sum_in_place", 0), 1);
  const int64_t in_place_before = cpu::ResidualSumsInPlace();
  ExpectSameOutputs(*fused, *plain, {2, 3, 6, 6});
  EXPECT_EQ(cpu::ResidualSumsInPlace() - in_place_before, 1);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ConvResidualSum, ::testing::Values("nhwc", "nChw16c", "nChw8c", "nchw"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// Without static shapes the pass cannot tell a broadcast from a same-shape Add: it keeps it.
TEST(ConvResidualSumPass, NeedsTheSameStaticShape) {
  const std::string bytes = Serialize(ResidualModel());
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "residual");
  ASSERT_TRUE(g.ok()) << g.status();
  for (Node& n : g->nodes) n.provider = "cpu";
  g->value_info.erase("s");
  const int fused = cpu::FuseConvResidualSum(*g, "cpu");
  EXPECT_EQ(fused, 2) << "add2 and add3; add1's s has no known shape";
}

}  // namespace
}  // namespace tandem
