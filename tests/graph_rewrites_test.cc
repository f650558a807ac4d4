// The standard-ONNX rewrites of `tandem convert --optimize` (optimizer/onnx_rewrites/): each
// rewrite shrinks a small imported graph as its header promises, and the rewritten graph
// computes what the original computes with its own (unrewritten) ops — e.g. Conv then
// BatchNormalization against one Conv with folded weights. tests/convert/ checks whole
// exported models against ONNX Runtime.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "graph/passes.h"
#include "optimizer/activation_fusion.h"
#include "onnx_import/import.h"
#include "optimizer/onnx_rewrites/bias_folding.h"
#include "optimizer/onnx_rewrites/conv_branch_merging.h"
#include "optimizer/onnx_rewrites/conv_bn_folding.h"
#include "optimizer/onnx_rewrites/conv_scale_folding.h"
#include "optimizer/onnx_rewrites/hard_sigmoid_folding.h"
#include "optimizer/onnx_rewrites/identity_elimination.h"
#include "optimizer/onnx_rewrites/matmul_bn_folding.h"
#include "optimizer/onnx_rewrites/pad_conv_folding.h"
#include "optimizer/onnx_rewrites/shape_simplification.h"
#include "optimizer/onnx_rewrites/transpose_optimization.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;


Tensor Random(Dims dims, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Tensor t = Tensor::Host(DataType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Runs `g` on the CPU without Tandem's own fusions, so the ops run as written.
std::vector<Tensor> RunGraph(const Graph& g, const std::map<std::string, Tensor>& feeds) {
  SessionOptions so;
  so.fusion = false;
  so.constant_folding = false;
  auto s = Session::FromGraph(g, so);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  auto out = (*s)->Run(feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

void ExpectClose(const std::vector<Tensor>& got, const std::vector<Tensor>& want, double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].dims(), want[o].dims());
    double scale = 0;
    for (int64_t i = 0; i < want[o].numel(); ++i) scale = std::max(scale, std::fabs(want[o].ElementAsDouble(i)));
    ASSERT_GT(scale, 0);
    for (int64_t i = 0; i < want[o].numel(); ++i)
      EXPECT_NEAR(got[o].ElementAsDouble(i), want[o].ElementAsDouble(i), rtol * scale) << "output " << o << " element " << i;
  }
}

int Count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

TEST(GraphRewrites, ConvBatchNormFoldsIntoOneConv) {
  onnx::ModelProto m = EmptyModel(13, "conv_bn");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 6, 6});
  AddFloatInitializer(g, "w", {4, 3, 3, 3}, 0.1f);
  AddFloatInitializer(g, "b", {4}, 0.2f, 0.1f);
  AddFloatInitializer(g, "scale", {4}, 0.3f, 1.f);
  AddFloatInitializer(g, "bias", {4}, 0.2f);
  AddFloatInitializer(g, "mean", {4}, 0.05f);
  AddFloatInitializer(g, "var", {4}, 0.1f, 1.f);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  AddNode(g, "BatchNormalization", "bn", {"c", "scale", "bias", "mean", "var"}, {"y"});
  SetFloatType(g->add_output(), "y", {2, 4, 6, 6});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({2, 3, 6, 6}, 1)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(FoldConvBatchNorm(graph), 1);
  EliminateDeadCode(graph);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].op_type, "Conv");
  EXPECT_FALSE(graph.initializers.count("w"));  // the unfolded weights are gone
  ExpectClose(RunGraph(graph, feeds), want, 1e-5);
}

TEST(GraphRewrites, BiasAddsFoldIntoGemmAndConv) {
  onnx::ModelProto m = EmptyModel(13, "bias");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "a", {2, 5});
  SetFloatType(g->add_input(), "x", {1, 2, 4, 4});
  AddFloatInitializer(g, "w", {5, 3}, 0.1f);
  AddFloatInitializer(g, "row", {1, 3}, 0.2f, 0.5f);
  AddFloatInitializer(g, "k", {3, 2, 1, 1}, 0.3f);
  AddFloatInitializer(g, "channel", {1, 3, 1, 1}, 0.4f);
  AddNode(g, "MatMul", "mm", {"a", "w"}, {"p"});
  AddNode(g, "Add", "add_row", {"row", "p"}, {"y1"});
  AddNode(g, "Conv", "conv", {"x", "k"}, {"c"});
  AddNode(g, "Add", "add_channel", {"c", "channel"}, {"y2"});
  AddNode(g, "MatMul", "mm_kept", {"a", "w"}, {"y3"});  // a graph output: its Add stays
  AddNode(g, "Add", "add_kept", {"y3", "row"}, {"y4"});
  SetFloatType(g->add_output(), "y1", {2, 3});
  SetFloatType(g->add_output(), "y2", {1, 3, 4, 4});
  SetFloatType(g->add_output(), "y3", {2, 3});
  SetFloatType(g->add_output(), "y4", {2, 3});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"a", Random({2, 5}, 2)}, {"x", Random({1, 2, 4, 4}, 3)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(FoldBiasAdds(graph), 2);
  EXPECT_EQ(Count(graph, "Gemm"), 1);
  EXPECT_EQ(Count(graph, "Add"), 1);
  EXPECT_EQ(Count(graph, "Conv"), 1);
  ExpectClose(RunGraph(graph, feeds), want, 1e-6);
}

// BatchNormalization as tf2onnx writes it for Keras: Conv (with or without a bias) * a
// per-channel constant + a per-channel constant becomes one Conv; a scalar Mul folds too; a
// Mul by a non-constant, or one whose Conv output has another reader, stays.
TEST(GraphRewrites, ChannelScalesAndBiasesFoldIntoConv) {
  onnx::ModelProto m = EmptyModel(13, "conv_scale");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 6, 6});
  SetFloatType(g->add_input(), "t", {1, 4, 1, 1});
  AddFloatInitializer(g, "w", {4, 3, 3, 3}, 0.1f);
  AddFloatInitializer(g, "b", {4}, 0.2f, 0.1f);
  AddFloatInitializer(g, "s", {1, 4, 1, 1}, 0.3f, 1.f);
  AddFloatInitializer(g, "c", {1, 4, 1, 1}, 0.2f);
  AddFloatInitializer(g, "half", {}, 0.f, 0.5f);
  AddNode(g, "Conv", "conv0", {"x", "w"}, {"c0"});  // no bias
  AddNode(g, "Mul", "mul0", {"c0", "s"}, {"m0"});
  AddNode(g, "Add", "add0", {"m0", "c"}, {"y0"});
  AddNode(g, "Conv", "conv1", {"x", "w", "b"}, {"c1"});  // its own bias
  AddNode(g, "Mul", "mul1", {"s", "c1"}, {"m1"});
  AddNode(g, "Add", "add1", {"c", "m1"}, {"y1"});
  AddNode(g, "Conv", "conv2", {"x", "w", "b"}, {"c2"});
  AddNode(g, "Mul", "mul2", {"c2", "half"}, {"y2"});  // one value
  AddNode(g, "Conv", "conv3", {"x", "w"}, {"c3"});
  AddNode(g, "Mul", "mul3", {"c3", "t"}, {"y3"});  // not a constant: stays
  SetFloatType(g->add_output(), "y0", {2, 4, 4, 4});
  SetFloatType(g->add_output(), "y1", {2, 4, 4, 4});
  SetFloatType(g->add_output(), "y2", {2, 4, 4, 4});
  SetFloatType(g->add_output(), "y3", {2, 4, 4, 4});
  SetFloatType(g->add_output(), "c3", {2, 4, 4, 4});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({2, 3, 6, 6}, 4)}, {"t", Random({1, 4, 1, 1}, 5)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(FoldConvScales(graph), 3);
  EXPECT_EQ(FoldBiasAdds(graph, /*convolutions_only=*/true), 2);
  EXPECT_EQ(Count(graph, "Conv"), 4);
  EXPECT_EQ(Count(graph, "Mul"), 1);
  EXPECT_EQ(Count(graph, "Add"), 0);
  EXPECT_TRUE(graph.initializers.count("w"));  // still read by conv3
  ExpectClose(RunGraph(graph, feeds), want, 1e-6);
}

// Keras's ZeroPadding2D before a stride-2 convolution (tf2onnx: Pad of the bottom and right,
// then Conv without pads) becomes the Conv's own padding, added to any it had; a Pad of
// another value, of the channels, or whose output is read elsewhere stays.
TEST(GraphRewrites, ZeroPadsFoldIntoTheirConv) {
  onnx::ModelProto m = EmptyModel(13, "pad_conv");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 3, 9, 9});
  AddFloatInitializer(g, "w", {4, 3, 3, 3}, 0.1f);
  AddInt64Initializer(g, "br", {0, 0, 0, 0, 0, 0, 1, 1});
  AddInt64Initializer(g, "tl2", {0, 0, 2, 1, 0, 0, 0, 0});
  AddInt64Initializer(g, "channels", {0, 1, 0, 0, 0, 0, 0, 0});
  AddFloatInitializer(g, "one", {}, 0.f, 1.f);
  AddNode(g, "Pad", "pad0", {"x", "br"}, {"p0"});
  AddIntsAttribute(AddNode(g, "Conv", "conv0", {"p0", "w"}, {"y0"}), "strides", {2, 2});
  AddNode(g, "Pad", "pad1", {"x", "tl2"}, {"p1"});
  AddIntsAttribute(AddNode(g, "Conv", "conv1", {"p1", "w"}, {"y1"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Pad", "pad2", {"x", "br", "one"}, {"p2"});  // pads with ones: stays
  AddNode(g, "Conv", "conv2", {"p2", "w"}, {"y2"});
  AddNode(g, "Pad", "pad3", {"x", "channels"}, {"p3"});  // pads a channel: stays
  AddFloatInitializer(g, "w4", {4, 4, 3, 3}, 0.1f);
  AddNode(g, "Conv", "conv3", {"p3", "w4"}, {"y3"});
  SetFloatType(g->add_output(), "y0", {1, 4, 4, 4});
  SetFloatType(g->add_output(), "y1", {1, 4, 11, 10});
  SetFloatType(g->add_output(), "y2", {1, 4, 8, 8});
  SetFloatType(g->add_output(), "y3", {1, 4, 7, 7});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 3, 9, 9}, 6)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(FoldPadsIntoConvs(graph), 2);
  EXPECT_EQ(Count(graph, "Pad"), 2);
  for (const Node& n : graph.nodes) {
    if (n.name == "conv0") EXPECT_EQ(n.attr_ints("pads"), (std::vector<int64_t>{0, 0, 1, 1}));
    if (n.name == "conv1") EXPECT_EQ(n.attr_ints("pads"), (std::vector<int64_t>{3, 2, 1, 1}));
    if (n.name == "conv0" || n.name == "conv1") EXPECT_EQ(n.inputs[0], "x");
  }
  ExpectClose(RunGraph(graph, feeds), want, 1e-6);
}

TEST(GraphRewrites, TransposePairsAroundUnaryOpsCancel) {
  // NHWC x -> to NCHW -> Relu -> back to NHWC -> y: only the Relu remains, writing y.
  onnx::ModelProto m = EmptyModel(13, "transposes");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 4, 5, 3});
  AddIntsAttribute(AddNode(g, "Transpose", "to_nchw", {"x"}, {"t"}), "perm", {0, 3, 1, 2});
  AddNode(g, "Relu", "relu", {"t"}, {"r"});
  AddIntsAttribute(AddNode(g, "Transpose", "to_nhwc", {"r"}, {"y"}), "perm", {0, 2, 3, 1});
  SetFloatType(g->add_output(), "y", {1, 4, 5, 3});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 4, 5, 3}, 4)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_GT(OptimizeTransposes(graph), 0);
  EliminateIdentities(graph);
  EliminateDeadCode(graph);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].op_type, "Relu");
  EXPECT_EQ(graph.nodes[0].outputs[0], "y");
  ExpectClose(RunGraph(graph, feeds), want, 0);
}

TEST(GraphRewrites, TransposeBeforeFlattenMovesIntoTheWeights) {
  // Keras's Flatten of an NHWC activation: Transpose -> Reshape [0, -1] -> MatMul and Gemm.
  onnx::ModelProto m = EmptyModel(13, "flatten");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 4, 5});
  AddFloatInitializer(g, "w", {60, 7}, 0.1f);
  AddFloatInitializer(g, "wt", {6, 60}, 0.2f);
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(0);
  shape->add_int64_data(-1);
  AddIntsAttribute(AddNode(g, "Transpose", "to_nhwc", {"x"}, {"t"}), "perm", {0, 2, 3, 1});
  AddNode(g, "Reshape", "flatten", {"t", "shape"}, {"f"});
  AddNode(g, "MatMul", "dense", {"f", "w"}, {"y1"});
  AddIntAttribute(AddNode(g, "Gemm", "dense_t", {"f", "wt"}, {"y2"}), "transB", 1);
  SetFloatType(g->add_output(), "y1", {2, 7});
  SetFloatType(g->add_output(), "y2", {2, 6});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({2, 3, 4, 5}, 5)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(OptimizeTransposes(graph), 1);
  EliminateDeadCode(graph);
  EXPECT_EQ(Count(graph, "Transpose"), 0);
  ExpectClose(RunGraph(graph, feeds), want, 1e-6);
}

TEST(GraphRewrites, TransposesPushedThroughAChannelsLastBlockCancel) {
  // A Keras block as tf2onnx writes it: NHWC x, each Conv between Transposes, the bias Add,
  // Relu, squeeze-excite ReduceMean and Mul, and a Pad in NHWC between the convolutions.
  onnx::ModelProto m = EmptyModel(13, "channels_last");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 6, 5, 4});
  AddFloatInitializer(g, "w0", {4, 4, 3, 3}, 0.1f);
  AddFloatInitializer(g, "w1", {4, 4, 3, 3}, 0.2f);
  AddFloatInitializer(g, "bias", {4}, 0.3f);
  AddInt64Initializer(g, "pads", {0, 1, 0, 0, 0, 0, 1, 0});
  AddIntsAttribute(AddNode(g, "Transpose", "in", {"x"}, {"t0"}), "perm", {0, 3, 1, 2});
  AddIntsAttribute(AddNode(g, "Conv", "conv0", {"t0", "w0"}, {"c0"}), "pads", {1, 1, 1, 1});
  AddIntsAttribute(AddNode(g, "Transpose", "back0", {"c0"}, {"n0"}), "perm", {0, 2, 3, 1});
  AddNode(g, "Add", "bias_add", {"n0", "bias"}, {"a"});
  AddNode(g, "Relu", "relu", {"a"}, {"r"});
  auto* mean = AddNode(g, "ReduceMean", "squeeze", {"r"}, {"s"});
  AddIntsAttribute(mean, "axes", {1, 2});
  AddNode(g, "Mul", "excite", {"r", "s"}, {"e"});
  AddNode(g, "Pad", "pad", {"e", "pads"}, {"p"});
  AddIntsAttribute(AddNode(g, "Transpose", "in1", {"p"}, {"t1"}), "perm", {0, 3, 1, 2});
  AddNode(g, "Conv", "conv1", {"t1", "w1"}, {"c1"});
  AddIntsAttribute(AddNode(g, "Transpose", "back1", {"c1"}, {"y"}), "perm", {0, 2, 3, 1});
  SetFloatType(g->add_output(), "y", {1, 5, 4, 4});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 6, 5, 4}, 6)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_GT(OptimizeTransposes(graph), 0);
  EliminateIdentities(graph);
  EXPECT_EQ(Count(graph, "Transpose"), 2);  // x to NCHW, y back to NHWC
  for (const Node& n : graph.nodes) {
    if (n.op_type == "ReduceMean") EXPECT_EQ(n.attr_ints("axes"), (std::vector<int64_t>{2, 3}));
    if (n.op_type == "Pad") {
      ASSERT_NE(graph.initializers.count(n.inputs[1]), 0u);
      EXPECT_EQ(graph.initializers.at(n.inputs[1]).ToInt64Vector(),
                (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 1}));  // H above, W right, now NCHW
    }
    if (n.op_type == "Add") EXPECT_EQ(graph.initializers.at(n.inputs[1]).dims(), (Dims{1, 4, 1, 1}));
  }
  ExpectClose(RunGraph(graph, feeds), want, 1e-5);
}

TEST(GraphRewrites, TransposesStayWhenPushingRemovesNone) {
  // A Transpose before a Mul and a MatMul meets no inverse: moving it below the Mul would
  // leave as many Transposes, so the graph stays as written.
  onnx::ModelProto m = EmptyModel(13, "no_pair");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 4, 5, 3});
  AddFloatInitializer(g, "half", {}, 0.5f);
  AddFloatInitializer(g, "w", {5, 2}, 0.1f);
  AddIntsAttribute(AddNode(g, "Transpose", "t", {"x"}, {"t"}), "perm", {0, 3, 1, 2});
  AddNode(g, "Mul", "scale", {"t", "half"}, {"s"});
  AddNode(g, "MatMul", "mm", {"s", "w"}, {"y"});
  SetFloatType(g->add_output(), "y", {1, 3, 4, 2});
  Graph graph = ImportTestModel(m);
  EXPECT_EQ(OptimizeTransposes(graph), 0);
  ASSERT_EQ(graph.nodes.size(), 3u);
  EXPECT_EQ(graph.nodes[1].op_type, "Mul");
  EXPECT_EQ(graph.nodes[1].inputs[0], "t");
}

TEST(GraphRewrites, SpelledOutHardSigmoidBecomesOneNodeAndHardSwishFusesIntoTheConv) {
  // tf2onnx's hard_swish after a convolution: y = c * (Clip(c + 3, 0, 6) * (1/6)).
  onnx::ModelProto m = EmptyModel(13, "hard_swish");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 3, 6, 6});
  AddFloatInitializer(g, "w", {4, 3, 3, 3}, 0.4f);
  AddFloatInitializer(g, "three", {}, 0.f, 3.f);
  AddFloatInitializer(g, "zero", {}, 0.f, 0.f);
  AddFloatInitializer(g, "six", {}, 0.f, 6.f);
  AddFloatInitializer(g, "sixth", {}, 0.f, 1.f / 6);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Add", "plus3", {"c", "three"}, {"a"});
  AddNode(g, "Clip", "relu6", {"a", "zero", "six"}, {"r"});
  AddNode(g, "Mul", "div6", {"sixth", "r"}, {"h"});
  AddNode(g, "Mul", "gate", {"c", "h"}, {"y"});
  SetFloatType(g->add_output(), "y", {1, 4, 6, 6});
  Graph graph = ImportTestModel(m);
  Tensor x = Random({1, 3, 6, 6}, 8);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 4;  // both sides of the clip
  const std::map<std::string, Tensor> feeds = {{"x", x}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(FoldSpelledOutHardSigmoids(graph), 1);
  ASSERT_EQ(Count(graph, "HardSigmoid"), 1);
  for (const Node& n : graph.nodes)
    if (n.op_type == "HardSigmoid") {
      EXPECT_FLOAT_EQ(n.attr_float("alpha", 0), 1.f / 6);
      EXPECT_FLOAT_EQ(n.attr_float("beta", 0), 0.5f);
      EXPECT_EQ(n.inputs, std::vector<std::string>{"c"});
    }
  ExpectClose(RunGraph(graph, feeds), want, 1e-6);
  EXPECT_EQ(FuseActivations(graph, FusableActivations::kCpu), 1);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].attr_string("activation", ""), "HardSwish");
  ExpectClose(RunGraph(graph, feeds), want, 1e-6);
}

TEST(GraphRewrites, ParallelBranchesOfOneInputMergeIntoOneConv) {
  // MobileOne before reparameterization: (conv_scale(x) + 0) + bn(x) + conv_kxk(x).
  onnx::ModelProto m = EmptyModel(15, "mobileone");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 4, 6, 5});
  AddFloatInitializer(g, "w1", {4, 4, 1, 1}, 0.2f);
  AddFloatInitializer(g, "w3", {4, 4, 3, 3}, 0.1f);
  AddFloatInitializer(g, "b3", {4}, 0.3f);
  AddFloatInitializer(g, "zero", {}, 0.f);
  AddNode(g, "Conv", "conv_scale", {"x", "w1"}, {"c1"});
  AddNode(g, "Add", "plus_zero", {"c1", "zero"}, {"s0"});
  AddInferenceBatchNorm(g, "identity", "x", "n", 4);
  AddNode(g, "Add", "add0", {"s0", "n"}, {"s1"});
  AddIntsAttribute(AddNode(g, "Conv", "conv_kxk", {"x", "w3", "b3"}, {"c3"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Add", "add1", {"s1", "c3"}, {"y"});
  SetFloatType(g->add_output(), "y", {1, 4, 6, 5});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 4, 6, 5}, 9)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(EliminateCopyingNodes(graph), 1);  // the + 0
  EXPECT_EQ(MergeConvBranches(graph), 2);
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_EQ(graph.nodes[0].op_type, "Conv");
  EXPECT_EQ(graph.nodes[0].outputs[0], "y");
  EXPECT_EQ(graph.nodes[0].attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  ExpectClose(RunGraph(graph, feeds), want, 1e-5);
}

TEST(GraphRewrites, BranchesWhoseKernelsDoNotNestStayApart) {
  // A 3x3 padded above and left only and a 1x1: the 1x1 is not at the 3x3's center.
  onnx::ModelProto m = EmptyModel(15, "off_center");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 4, 6, 5});
  AddFloatInitializer(g, "w1", {4, 4, 1, 1}, 0.2f);
  AddFloatInitializer(g, "w3", {4, 4, 3, 3}, 0.1f);
  AddNode(g, "Conv", "c1", {"x", "w1"}, {"c1"});
  AddIntsAttribute(AddNode(g, "Conv", "c3", {"x", "w3"}, {"c3"}), "pads", {2, 2, 0, 0});
  AddNode(g, "Add", "add", {"c1", "c3"}, {"y"});
  SetFloatType(g->add_output(), "y", {1, 4, 6, 5});
  Graph graph = ImportTestModel(m);
  EXPECT_EQ(MergeConvBranches(graph), 0);
  EXPECT_EQ(graph.nodes.size(), 3u);
}

TEST(GraphRewrites, BatchNormAfterAFlattenedMatMulFoldsIntoIt) {
  // timm's LinearNorm as exported: MatMul, Flatten to [rows, N], BatchNormalization, and a
  // Reshape back to the product's Shape.
  onnx::ModelProto m = EmptyModel(15, "linear_norm");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 7, 5});
  AddFloatInitializer(g, "w", {5, 6}, 0.2f);
  AddNode(g, "MatMul", "linear", {"x", "w"}, {"mm"});
  AddIntAttribute(AddNode(g, "Flatten", "flatten", {"mm"}, {"flat"}), "axis", 2);
  AddInferenceBatchNorm(g, "bn", "flat", "n", 6);
  AddNode(g, "Shape", "shape", {"mm"}, {"shape"});
  AddNode(g, "Reshape", "back", {"n", "shape"}, {"y"});
  SetFloatType(g->add_output(), "y", {1, 7, 6});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 7, 5}, 10)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(FoldMatMulBatchNorm(graph), 1);
  EXPECT_EQ(Count(graph, "BatchNormalization"), 0);
  EXPECT_EQ(Count(graph, "Add"), 1);
  ExpectClose(RunGraph(graph, feeds), want, 1e-5);
}

TEST(GraphRewrites, BatchNormAfterAReshapedMatMulFoldsIntoIt) {
  // The dynamo export of LinearNorm: Reshapes to [rows, N] and back by constant shapes. A
  // Reshape that moves the columns ([7, 6] -> [21, 2]) keeps its BatchNormalization.
  for (const bool columns_kept : {true, false}) {
    onnx::ModelProto m = EmptyModel(15, "linear_norm");
    auto* g = m.mutable_graph();
    SetFloatType(g->add_input(), "x", {1, 7, 5});
    AddFloatInitializer(g, "w", {5, 6}, 0.2f);
    const int64_t n = columns_kept ? 6 : 2;
    AddInt64Initializer(g, "rows", {-1, n});
    AddInt64Initializer(g, "back", {1, 7, 6});
    AddNode(g, "MatMul", "linear", {"x", "w"}, {"mm"});
    AddNode(g, "Reshape", "flatten", {"mm", "rows"}, {"flat"});
    AddInferenceBatchNorm(g, "bn", "flat", "n", n);
    AddNode(g, "Reshape", "unflatten", {"n", "back"}, {"y"});
    SetFloatType(g->add_output(), "y", {1, 7, 6});
    Graph graph = ImportTestModel(m);
    const std::map<std::string, Tensor> feeds = {{"x", Random({1, 7, 5}, 11)}};
    const auto want = RunGraph(graph, feeds);
    EXPECT_EQ(FoldMatMulBatchNorm(graph), columns_kept ? 1 : 0);
    EXPECT_EQ(Count(graph, "BatchNormalization"), columns_kept ? 0 : 1);
    ExpectClose(RunGraph(graph, feeds), want, 1e-5);
  }
}

TEST(GraphRewrites, ShapeChainBecomesAConstantReshapeTarget) {
  // y = x.view(x.size(0), -1) as PyTorch's TorchScript exporter writes it, batch symbolic.
  onnx::ModelProto m = EmptyModel(13, "view");
  auto* g = m.mutable_graph();
  auto* x = g->add_input();
  SetFloatType(x, "x", {1, 3, 4});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  auto add_ints = [g](const std::string& name, std::vector<int64_t> v, bool scalar) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t i : v) t->add_int64_data(i);
  };
  add_ints("zero", {0}, true);
  add_ints("axes", {0}, false);
  add_ints("minus_one", {-1}, false);
  AddNode(g, "Shape", "shape", {"x"}, {"s"});
  AddNode(g, "Gather", "batch", {"s", "zero"}, {"n"});
  AddNode(g, "Unsqueeze", "unsqueeze", {"n", "axes"}, {"n1"});
  AddNode(g, "Concat", "target", {"n1", "minus_one"}, {"st"});
  AddIntAttribute(&g->mutable_node()->at(3), "axis", 0);
  AddNode(g, "Reshape", "view", {"x", "st"}, {"y"});
  auto* y = g->add_output();
  SetFloatType(y, "y", {1, 12});
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  Graph graph = ImportTestModel(m);
  const Graph original = graph;
  EXPECT_EQ(SimplifyShapes(graph), 1);
  EliminateDeadCode(graph);
  ASSERT_EQ(graph.nodes.size(), 1u);
  const Tensor& target = graph.initializers.at(graph.nodes[0].inputs[1]);
  EXPECT_EQ((std::vector<int64_t>(target.data<int64_t>(), target.data<int64_t>() + target.numel())),
            (std::vector<int64_t>{0, -1}));
  for (int64_t batch : {1, 5}) {
    const std::map<std::string, Tensor> feeds = {{"x", Random({batch, 3, 4}, 6)}};
    ExpectClose(RunGraph(graph, feeds), RunGraph(original, feeds), 0);
  }
}

TEST(GraphRewrites, IdentitiesAndInferenceDropoutsGo) {
  onnx::ModelProto m = EmptyModel(13, "identities");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3});
  AddNode(g, "Identity", "id1", {"x"}, {"a"});
  AddNode(g, "Dropout", "drop", {"a"}, {"b"});
  AddNode(g, "Relu", "relu", {"b"}, {"c"});
  AddNode(g, "Identity", "id2", {"c"}, {"y"});
  AddNode(g, "Identity", "id3", {"x"}, {"z"});  // input straight to output: must stay
  SetFloatType(g->add_output(), "y", {2, 3});
  SetFloatType(g->add_output(), "z", {2, 3});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({2, 3}, 7)}};
  const auto want = RunGraph(graph, feeds);
  EXPECT_EQ(EliminateIdentities(graph), 3);
  ASSERT_EQ(graph.nodes.size(), 2u);
  EXPECT_EQ(Count(graph, "Identity"), 1);
  for (const Node& n : graph.nodes) {
    if (n.op_type == "Relu") {
      EXPECT_EQ(n.outputs[0], "y");
    }
  }
  ExpectClose(RunGraph(graph, feeds), want, 0);
}

// EliminateCopyingNodes on `graph` removes `removed` nodes and leaves `left` of
// op `op`, as the Session (which runs it before placement) does too; neither changes the
// outputs `want` of the graph as it was.
void ExpectNoOpsRemoved(const Graph& graph, const std::map<std::string, Tensor>& feeds,
                        const std::vector<Tensor>& want, const char* op, int removed, int left) {
  Graph rewritten = graph;
  EXPECT_EQ(EliminateCopyingNodes(rewritten), removed);
  EXPECT_EQ(Count(rewritten, op), left);
  ExpectClose(RunGraph(rewritten, feeds), want, 0);
  SessionOptions so;
  so.providers = {"cpu"};
  auto session = Session::FromGraph(graph, so);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_EQ(Count((*session)->graph(), op), left) << "the Session removes them too";
  auto got = (*session)->Run(feeds);
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectClose(*got, want, 1e-6);
}

// A Pad of constant zeros (PyTorch's AvgPool2d export) is removed, by EliminateIdentities
// and by the Session before placement; a Pad that pads stays.
TEST(GraphRewrites, ZeroPadsGo) {
  onnx::ModelProto m = EmptyModel(13, "zero_pad");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 2, 4, 4});
  AddInt64Initializer(g, "zeros", {0, 0, 0, 0, 0, 0, 0, 0});
  AddInt64Initializer(g, "ones", {0, 0, 1, 1, 0, 0, 1, 1});
  AddNode(g, "Pad", "zero_pad", {"x", "zeros"}, {"a"});
  AddIntsAttribute(AddNode(g, "AveragePool", "pool", {"a"}, {"b"}), "kernel_shape", {2, 2});
  AddNode(g, "Pad", "real_pad", {"b", "ones"}, {"y"});
  SetFloatType(g->add_output(), "y", {1, 2, 5, 5});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 2, 4, 4}, 9)}};
  ExpectNoOpsRemoved(graph, feeds, RunGraph(graph, feeds), "Pad", 1, 1);
}

// A Slice that keeps every element (x[:, :C] of a C-channel x, an end past the size, a
// negative start at the first element) is removed, by the rewrite and by the Session;
// Slices that drop an element (an end short of the size, a negative end, a start past 0) or
// step backwards stay. The removal changes no output.
TEST(GraphRewrites, WholeSlicesGo) {
  onnx::ModelProto m = EmptyModel(13, "whole_slice");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 6, 3, 3});
  AddInt64Initializer(g, "zero", {0});
  AddInt64Initializer(g, "six", {6});
  AddInt64Initializer(g, "five", {5});
  AddInt64Initializer(g, "minus_six", {-6});
  AddInt64Initializer(g, "big", {std::numeric_limits<int64_t>::max()});
  AddInt64Initializer(g, "axis1", {1});
  AddInt64Initializer(g, "minus_one", {-1});
  AddInt64Initializer(g, "minus_big", {std::numeric_limits<int64_t>::min()});
  AddInt64Initializer(g, "one", {1});
  AddNode(g, "Slice", "channels", {"x", "zero", "six", "axis1"}, {"a"});            // x[:, :6]: whole
  AddNode(g, "Slice", "to_the_end", {"a", "zero", "big"}, {"b"});                 // axis 0 from 0 on: whole
  AddNode(g, "Slice", "negative_start", {"b", "minus_six", "big", "axis1"}, {"c"});  // x[:, -6:]: whole
  AddNode(g, "Relu", "relu", {"c"}, {"d"});
  AddNode(g, "Slice", "drops_one", {"d", "zero", "five", "axis1"}, {"y"});         // x[:, :5]: stays
  AddNode(g, "Slice", "backwards", {"d", "minus_one", "minus_big", "axis1", "minus_one"}, {"z"});  // stays
  AddNode(g, "Slice", "negative_end", {"d", "zero", "minus_one", "axis1"}, {"u"});  // x[:, :-1]: stays
  AddNode(g, "Slice", "from_one", {"d", "one", "six", "axis1"}, {"v"});           // x[:, 1:6]: stays
  SetFloatType(g->add_output(), "y", {1, 5, 3, 3});
  SetFloatType(g->add_output(), "z", {1, 6, 3, 3});
  SetFloatType(g->add_output(), "u", {1, 5, 3, 3});
  SetFloatType(g->add_output(), "v", {1, 5, 3, 3});
  Graph graph = ImportTestModel(m);
  const std::map<std::string, Tensor> feeds = {{"x", Random({1, 6, 3, 3}, 4)}};
  ExpectNoOpsRemoved(graph, feeds, RunGraph(graph, feeds), "Slice", 3, 4);
}

}  // namespace
}  // namespace tandem
