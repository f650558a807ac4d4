// The CPU provider's channel-blocked layout pass (providers/cpu/rewrites/blocked_layout.h): a chain
// of convolutions, element-wise ops, pools, BatchNormalization and Concat runs blocked and
// gives the outputs of the same graph run plain (fusion off); values read by plain
// readers or returned are converted back; other providers' nodes and training graphs
// are left alone. Each layout (channels-last, 16- and 8-channel blocks) is forced in turn
// through TANDEM_CPU_CONV_LAYOUT, whatever this CPU's oneDNN prefers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "onnx_import/import.h"
#include "providers/cpu/cpu_isa.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/rewrites/blocked_layout.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// x[2,3,12,12] -> Conv 16 (+Relu) = r0 -> depthwise Conv (dilated) -> Add r0 = a (also an output)
// -> BatchNormalization -> Clip = cl -> MaxPool 3x3/2 pad 1 = p [2,16,6,6];
// Concat(Conv 1x1 16 of p, p) axis -3 -> AveragePool 2x2 -> GlobalAveragePool -> Flatten = y;
// Conv 16 of p + Relu + MaxPool 2x2 = z (an output); Conv 12 of cl = u (12 channels: no
// block divides them, so it reads cl blocked and writes u plain).
onnx::ModelProto ChainModel() {
  onnx::ModelProto m = EmptyModel(13, "blocked_chain");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 12, 12});
  AddFloatInitializer(g, "w0", {16, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "b0", {16}, 0.02f);
  AddFloatInitializer(g, "w1", {16, 1, 3, 3}, 0.07f);
  AddFloatInitializer(g, "lo", {}, 0.f, -0.2f);
  AddFloatInitializer(g, "hi", {}, 0.f, 0.6f);
  AddFloatInitializer(g, "w2", {16, 16, 1, 1}, 0.04f);
  AddFloatInitializer(g, "w3", {16, 16, 3, 3}, 0.02f);
  AddFloatInitializer(g, "w4", {12, 16, 1, 1}, 0.03f);
  AddIntsAttribute(AddNode(g, "Conv", "conv0", {"x", "w0", "b0"}, {"c0"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", "relu0", {"c0"}, {"r0"});
  // dilated, so that the Session does not merge it and the Add's identity branch into one
  // convolution (optimizer/onnx_rewrites/conv_branch_merging.h)
  auto* dw = AddNode(g, "Conv", "conv1", {"r0", "w1"}, {"c1"});
  AddIntsAttribute(dw, "pads", {2, 2, 2, 2});
  AddIntsAttribute(dw, "dilations", {2, 2});
  AddIntAttribute(dw, "group", 16);
  AddNode(g, "Add", "add", {"c1", "r0"}, {"a"});
  AddInferenceBatchNorm(g, "bn", "a", "n", 16);
  AddNode(g, "Clip", "clip", {"n", "lo", "hi"}, {"cl"});
  auto* mp = AddNode(g, "MaxPool", "pool", {"cl"}, {"p"});
  AddIntsAttribute(mp, "kernel_shape", {3, 3});
  AddIntsAttribute(mp, "strides", {2, 2});
  AddIntsAttribute(mp, "pads", {1, 1, 1, 1});
  AddNode(g, "Conv", "conv2", {"p", "w2"}, {"c2"});
  AddIntAttribute(AddNode(g, "Concat", "cat", {"c2", "p"}, {"k"}), "axis", -3);
  auto* ap = AddNode(g, "AveragePool", "avg", {"k"}, {"ak"});
  AddIntsAttribute(ap, "kernel_shape", {2, 2});
  AddIntsAttribute(ap, "strides", {2, 2});
  AddNode(g, "GlobalAveragePool", "gap", {"ak"}, {"gk"});
  AddNode(g, "Flatten", "flat", {"gk"}, {"y"});
  AddIntsAttribute(AddNode(g, "Conv", "conv3", {"p", "w3"}, {"c3"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", "relu3", {"c3"}, {"r3"});
  auto* mp3 = AddNode(g, "MaxPool", "pool3", {"r3"}, {"z"});
  AddIntsAttribute(mp3, "kernel_shape", {2, 2});
  AddIntsAttribute(mp3, "strides", {2, 2});
  AddNode(g, "Conv", "conv4", {"cl", "w4"}, {"u"});
  SetFloatType(g->add_output(), "y", {2, 32});
  SetFloatType(g->add_output(), "z", {2, 16, 3, 3});
  SetFloatType(g->add_output(), "u", {2, 12, 12, 12});
  SetFloatType(g->add_output(), "a", {2, 16, 12, 12});
  return m;
}

// A network's first layer: x[6,3,64,64] -> Conv M 3x3 pad 1 + Relu + MaxPool 2x2 = y
// (a plain image of few channels, pooled: providers/cpu/kernels/nn/conv.cc reads it as it is,
// and with 512 KiB per unpooled image (M = 32) convolves and pools 2 images at a time).
onnx::ModelProto FirstLayerModel(int64_t M) {
  onnx::ModelProto m = EmptyModel(13, "first_layer");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {6, 3, 64, 64});
  AddFloatInitializer(g, "w", {M, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "b", {M}, 0.02f);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", "relu", {"c"}, {"r"});
  auto* mp = AddNode(g, "MaxPool", "pool", {"r"}, {"y"});
  AddIntsAttribute(mp, "kernel_shape", {2, 2});
  AddIntsAttribute(mp, "strides", {2, 2});
  SetFloatType(g->add_output(), "y", {6, M, 32, 32});
  return m;
}

// A network's first layer before an unfused pool (resnet's stem): x[2,3,20,20] -> Conv 16
// 7x7/2 pad 3 [+ Relu] = r -> MaxPool 3x3/2 pad 1 = p -> Conv 16 3x3 pad 1 = y; with
// `r_output`, r is a graph output too.
onnx::ModelProto StemModel(bool relu, bool r_output) {
  onnx::ModelProto m = EmptyModel(13, "stem");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 20, 20});
  AddFloatInitializer(g, "w0", {16, 3, 7, 7}, 0.03f);
  AddFloatInitializer(g, "b0", {16}, 0.02f);
  AddFloatInitializer(g, "w1", {16, 16, 3, 3}, 0.02f);
  AddIntsAttribute(AddPaddedConv(g, "conv0", {"x", "w0", "b0"}, relu ? "c" : "r", 3), "strides", {2, 2});
  if (relu) AddNode(g, "Relu", "relu0", {"c"}, {"r"});
  auto* mp = AddNode(g, "MaxPool", "pool", {"r"}, {"p"});
  AddIntsAttribute(mp, "kernel_shape", {3, 3});
  AddIntsAttribute(mp, "strides", {2, 2});
  AddIntsAttribute(mp, "pads", {1, 1, 1, 1});
  AddPaddedConv(g, "conv1", {"p", "w1"}, "y", 1);
  SetFloatType(g->add_output(), "y", {2, 16, 5, 5});
  if (r_output) SetFloatType(g->add_output(), "r", {2, 16, 10, 10});
  return m;
}

// A feature map returned: x[1,8,48,48] -> Conv 32 3x3 pad 1 = y (73,728 elements: large
// enough for FromBlocked's oneDNN reorder).
onnx::ModelProto FeatureMapModel() {
  onnx::ModelProto m = EmptyModel(13, "feature_map");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 8, 48, 48});
  AddFloatInitializer(g, "w", {32, 8, 3, 3}, 0.04f);
  AddPaddedConv(g, "conv", {"x", "w"}, "y", 1);
  SetFloatType(g->add_output(), "y", {1, 32, 48, 48});
  return m;
}

// Global pools of a wide map: x[2,8,10,10] -> Conv 80 3x3 pad 1 = c -> GlobalAveragePool = avg,
// GlobalMaxPool = max (80 channels: with channels-last a whole 64-channel chunk and a tail).
onnx::ModelProto GlobalPoolsModel() {
  onnx::ModelProto m = EmptyModel(13, "global_pools");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 8, 10, 10});
  AddFloatInitializer(g, "w", {80, 8, 3, 3}, 0.04f);
  AddPaddedConv(g, "conv", {"x", "w"}, "c", 1);
  AddNode(g, "GlobalAveragePool", "gap", {"c"}, {"avg"});
  AddNode(g, "GlobalMaxPool", "gmp", {"c"}, {"max"});
  SetFloatType(g->add_output(), "avg", {2, 80, 1, 1});
  SetFloatType(g->add_output(), "max", {2, 80, 1, 1});
  return m;
}

// Squeeze-and-excitation as exporters write it: x[2,8,10,10] -> Conv 48 3x3 pad 1 = c ->
// ReduceMean over (H, W), keepdims = m -> Conv 12 1x1 + Relu -> Conv 48 1x1 + Sigmoid = s
// -> Mul(c, s) = y. From opset 18 the axes are an input: ({-1, -2} there, {2, 3} before).
onnx::ModelProto SqueezeExcitationModel(int opset) {
  onnx::ModelProto m = EmptyModel(opset, "squeeze_excitation");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 8, 10, 10});
  AddFloatInitializer(g, "w", {48, 8, 3, 3}, 0.04f);
  AddFloatInitializer(g, "w1", {12, 48, 1, 1}, 0.3f);
  AddFloatInitializer(g, "w2", {48, 12, 1, 1}, 0.5f, 0.1f);
  AddPaddedConv(g, "conv", {"x", "w"}, "c", 1);
  if (opset >= 18) {
    onnx::TensorProto* axes = g->add_initializer();
    axes->set_name("axes");
    axes->set_data_type(onnx::TensorProto::INT64);
    axes->add_dims(2);
    axes->add_int64_data(-1);
    axes->add_int64_data(-2);
    AddNode(g, "ReduceMean", "mean", {"c", "axes"}, {"m"});
  } else {
    AddIntsAttribute(AddNode(g, "ReduceMean", "mean", {"c"}, {"m"}), "axes", {2, 3});
  }
  AddNode(g, "Conv", "reduce", {"m", "w1"}, {"r"});
  AddNode(g, "Relu", "relu", {"r"}, {"rr"});
  AddNode(g, "Conv", "expand", {"rr", "w2"}, {"e"});
  AddNode(g, "Sigmoid", "gate", {"e"}, {"s"});
  AddNode(g, "Mul", "scale", {"c", "s"}, {"y"});
  SetFloatType(g->add_output(), "y", {2, 48, 10, 10});
  return m;
}

// Resizes of a feature map: x[1,3,12,12] -> Conv 16 3x3 pad 1 = c -> Resize (nearest) to
// 24x24 = u -> Conv 16 3x3 pad 1 = y; and c -> Resize (linear) to 30x30 = z, a graph output.
onnx::ModelProto ResizeModel() {
  onnx::ModelProto m = EmptyModel(13, "resizes");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 3, 12, 12});
  AddFloatInitializer(g, "w0", {16, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "w1", {16, 16, 3, 3}, 0.02f);
  AddInt64Initializer(g, "up_sizes", {1, 16, 24, 24});
  AddInt64Initializer(g, "head_sizes", {1, 16, 30, 30});
  AddPaddedConv(g, "conv0", {"x", "w0"}, "c", 1);
  AddNode(g, "Resize", "up", {"c", "", "", "up_sizes"}, {"u"});
  AddPaddedConv(g, "conv1", {"u", "w1"}, "y", 1);
  onnx::AttributeProto* mode = AddNode(g, "Resize", "head", {"c", "", "", "head_sizes"}, {"z"})->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("linear");
  SetFloatType(g->add_output(), "y", {1, 16, 24, 24});
  SetFloatType(g->add_output(), "z", {1, 16, 30, 30});
  return m;
}

// Resizes of a plain map (the graph input): x[1,16,6,6] -> Resize (nearest) to 12x12 = u ->
// Relu = a -> Conv 16 3x3 pad 1 = y; x -> Resize to 12x12 = u2 -> Conv = y2 (x converted
// once for both); x -> Resize to 3x3 = d -> Conv = e (downsampling); x -> Resize to 9x9 =
// z, a graph output.
onnx::ModelProto PlainResizeModel() {
  onnx::ModelProto m = EmptyModel(13, "plain_resizes");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 16, 6, 6});
  AddFloatInitializer(g, "w", {16, 16, 3, 3}, 0.02f);
  AddInt64Initializer(g, "up_sizes", {1, 16, 12, 12});
  AddInt64Initializer(g, "down_sizes", {1, 16, 3, 3});
  AddInt64Initializer(g, "head_sizes", {1, 16, 9, 9});
  AddNode(g, "Resize", "up", {"x", "", "", "up_sizes"}, {"u"});
  AddNode(g, "Relu", "relu", {"u"}, {"a"});
  AddPaddedConv(g, "conv", {"a", "w"}, "y", 1);
  AddNode(g, "Resize", "up2", {"x", "", "", "up_sizes"}, {"u2"});
  AddPaddedConv(g, "conv2", {"u2", "w"}, "y2", 1);
  AddNode(g, "Resize", "down", {"x", "", "", "down_sizes"}, {"d"});
  AddPaddedConv(g, "conv_down", {"d", "w"}, "e", 1);
  AddNode(g, "Resize", "head", {"x", "", "", "head_sizes"}, {"z"});
  SetFloatType(g->add_output(), "y", {1, 16, 12, 12});
  SetFloatType(g->add_output(), "y2", {1, 16, 12, 12});
  SetFloatType(g->add_output(), "e", {1, 16, 3, 3});
  SetFloatType(g->add_output(), "z", {1, 16, 9, 9});
  return m;
}

Graph ImportChain() { return ImportTestModel(ChainModel()); }

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

struct Layout {
  const char* name;  // TANDEM_CPU_CONV_LAYOUT
  int block;         // the channel_block it gives
};

void PrintTo(const Layout& layout, std::ostream* os) { *os << layout.name; }

class BlockedLayoutChain : public ::testing::TestWithParam<Layout> {};

TEST_P(BlockedLayoutChain, MatchesThePlainGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  const int block = GetParam().block;
  const bool channels_last = block == cpu::kChannelsLast;
  ASSERT_EQ(cpu::ConvChannelBlock(), block);
  auto blocked = LoadTestModel(ChainModel(), true), plain = LoadTestModel(ChainModel(), false);
  ASSERT_TRUE(blocked && plain);
  EXPECT_EQ(plain->stats().nodes_provider_rewritten, 0);
  const Graph& g = blocked->graph();
  // Which nodes run blocked (names after fusion; conv1 takes the Add as its residual sum,
  // providers/cpu/rewrites/conv_sum.h).
  for (const char* name : {"conv0+relu0", "conv1+add", "bn", "clip", "pool", "conv2",
                           "cat", "avg", "gap", "conv3+relu3+pool3", "conv4"}) {
    const Node* n = FindNode(g, name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->attr_int("channel_block", 0), block) << name;
  }
  // 12 channels: with a block of 8 or 16 conv4 reads cl as it is stored and writes u plain;
  // channels-last takes any channel count.
  EXPECT_EQ(FindNode(g, "conv4")->attr_int("blocked_output", 1), channels_last ? 1 : 0);
  EXPECT_EQ(FindNode(g, "conv4")->inputs[0], "cl#blocked");
  EXPECT_EQ(FindNode(g, "conv4")->outputs[0], channels_last ? "u#blocked" : "u");
  // The channel axis as stored: the channels' own (channels-last) or the blocks'.
  EXPECT_EQ(FindNode(g, "cat")->attr_int("axis", 0), channels_last ? 4 : 1);
  // Plain copies exactly where something reads the plain layout: the outputs a and z (and
  // u when conv4 writes blocked), gk for Flatten.
  std::map<std::string, std::string> from_blocked;  // plain value -> blocked source
  for (const Node& n : g.nodes)
    if (n.op_type == "FromBlocked") from_blocked[n.outputs[0]] = n.inputs[0];
  EXPECT_EQ(from_blocked.size(), channels_last ? 4u : 3u);
  for (const char* v : {"a", "z", "gk"}) EXPECT_EQ(from_blocked[v], std::string(v) + "#blocked");
  if (channels_last) {
    EXPECT_EQ(from_blocked["u"], "u#blocked");
  }
  EXPECT_EQ(blocked->stats().nodes_provider_rewritten, 12 + 1);  // blocked, and one residual sum

  ExpectSameOutputs(*blocked, *plain, {2, 3, 12, 12});
}

// 32 output channels: whole blocks of 8 or 16; 24: with channels-last oneDNN may write 16-
// channel blocks, the last one half padding, that the pool turns into channels-last.
TEST_P(BlockedLayoutChain, FirstLayerConvReluPoolMatchesThePlainGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  const int block = GetParam().block;
  for (const int64_t M : {32, 24}) {
    auto blocked = LoadTestModel(FirstLayerModel(M), true), plain = LoadTestModel(FirstLayerModel(M), false);
    ASSERT_TRUE(blocked && plain);
    const Node* conv = FindNode(blocked->graph(), "conv+relu+pool");
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->attr_int("channel_block", 0), block == cpu::kChannelsLast || M % block == 0 ? block : 0) << M;
    ExpectSameOutputs(*blocked, *plain, {6, 3, 64, 64});
  }
}

// With channels-last the stem's convolution writes this CPU's channel blocks (ChannelBlock:
// 16, or 8 with AVX-512 capped) and the pool turns them into channels-last; with blocks
// throughout both keep the graph's blocks.
TEST_P(BlockedLayoutChain, StemConvWritesBlocksItsPoolReads) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  const int block = GetParam().block;
  auto blocked = LoadTestModel(StemModel(true, false), true), plain = LoadTestModel(StemModel(true, false), false);
  ASSERT_TRUE(blocked && plain);
  const Node* conv = FindNode(blocked->graph(), "conv0+relu0");
  const Node* pool = FindNode(blocked->graph(), "pool");
  ASSERT_TRUE(conv && pool);
  const int image_block = block == cpu::kChannelsLast ? cpu::ChannelBlock() : block;
  EXPECT_EQ(conv->attr_int("channel_block", 0), image_block);
  EXPECT_EQ(pool->attr_int("input_channel_block", block), image_block);
  EXPECT_EQ(pool->attr_int("channel_block", 0), block);
  ExpectSameOutputs(*blocked, *plain, {2, 3, 20, 20});
}

TEST_P(BlockedLayoutChain, ReturnedFeatureMapMatchesThePlainGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  auto blocked = LoadTestModel(FeatureMapModel(), true), plain = LoadTestModel(FeatureMapModel(), false);
  ASSERT_TRUE(blocked && plain);
  const Node* from = FindNode(blocked->graph(), "y/from_blocked");
  ASSERT_NE(from, nullptr);
  EXPECT_EQ(from->attr_int("channel_block", 0), GetParam().block);
  ExpectSameOutputs(*blocked, *plain, {1, 8, 48, 48});
}

TEST_P(BlockedLayoutChain, GlobalPoolsOfAWideMapMatchThePlainGraph) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  auto blocked = LoadTestModel(GlobalPoolsModel(), true), plain = LoadTestModel(GlobalPoolsModel(), false);
  ASSERT_TRUE(blocked && plain);
  for (const char* name : {"gap", "gmp"}) {
    const Node* pool = FindNode(blocked->graph(), name);
    ASSERT_NE(pool, nullptr) << name;
    EXPECT_EQ(pool->attr_int("channel_block", 0), GetParam().block) << name;
  }
  ExpectSameOutputs(*blocked, *plain, {2, 8, 10, 10});
}

// The pool, the gate's convolutions and the scaling stay blocked: the ReduceMean runs as a
// blocked GlobalAveragePool and only y is converted back.
TEST_P(BlockedLayoutChain, SqueezeExcitationStaysBlocked) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  for (int opset : {13, 18}) {
    SCOPED_TRACE(opset);
    auto blocked = LoadTestModel(SqueezeExcitationModel(opset), true);
    auto plain = LoadTestModel(SqueezeExcitationModel(opset), false);
    ASSERT_TRUE(blocked && plain);
    const Node* mean = FindNode(blocked->graph(), "mean");
    ASSERT_NE(mean, nullptr);
    EXPECT_EQ(mean->op_type, "GlobalAveragePool");
    EXPECT_EQ(mean->inputs.size(), 1u);
    EXPECT_EQ(mean->attr_int("channel_block", 0), GetParam().block);
    int from_blocked = 0;
    for (const Node& n : blocked->graph().nodes) from_blocked += n.op_type == "FromBlocked";
    EXPECT_EQ(from_blocked, 1);  // y's
    ExpectSameOutputs(*blocked, *plain, {2, 8, 10, 10});
  }
}

// The Resize between convolutions reads and writes blocked; the one only a graph output
// reads reads c plain (the smaller map converted, not its upsampled output).
TEST_P(BlockedLayoutChain, ResizeBetweenConvolutionsStaysBlocked) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  auto blocked = LoadTestModel(ResizeModel(), true), plain = LoadTestModel(ResizeModel(), false);
  ASSERT_TRUE(blocked && plain);
  const Node* up = FindNode(blocked->graph(), "up");
  const Node* head = FindNode(blocked->graph(), "head");
  ASSERT_TRUE(up && head);
  EXPECT_EQ(up->attr_int("channel_block", 0), GetParam().block);
  EXPECT_EQ(up->inputs[0], "c#blocked");
  EXPECT_FALSE(head->has_attr("channel_block"));
  EXPECT_EQ(head->inputs[0], "c");
  EXPECT_EQ(head->outputs[0], "z");
  ExpectSameOutputs(*blocked, *plain, {1, 3, 12, 12});
}

// The upsampling Resizes of a plain map that convolutions read (one through Relu) read x
// converted into the blocks by one ToBlocked placed before the first; the downsampling one
// and the one a graph output reads stay plain.
TEST_P(BlockedLayoutChain, PlainMapUpsampledIntoAConvolutionIsConvertedFirst) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam().name);
  auto blocked = LoadTestModel(PlainResizeModel(), true), plain = LoadTestModel(PlainResizeModel(), false);
  ASSERT_TRUE(blocked && plain);
  const Graph& g = blocked->graph();
  const Node* up = FindNode(g, "up");
  const Node* down = FindNode(g, "down");
  const Node* head = FindNode(g, "head");
  ASSERT_TRUE(up && down && head);
  EXPECT_EQ(up->attr_int("channel_block", 0), GetParam().block);
  EXPECT_EQ(up->inputs[0], "x#to_blocked");
  EXPECT_EQ(up->outputs[0], "u#blocked");
  const Node* up2 = FindNode(g, "up2");
  ASSERT_TRUE(up2);
  EXPECT_EQ(up2->inputs[0], "x#to_blocked");
  int to_blocked = 0;
  bool converted_first = false, up_seen = false;
  for (const Node& n : g.nodes) {
    up_seen |= &n == up;
    if (n.op_type != "ToBlocked") continue;
    ++to_blocked;
    converted_first = !up_seen && n.inputs == std::vector<std::string>{"x"} && n.outputs[0] == "x#to_blocked" &&
                      n.attr_int("channel_block", 0) == GetParam().block;
  }
  EXPECT_EQ(to_blocked, 1);
  EXPECT_TRUE(converted_first);
  EXPECT_FALSE(down->has_attr("channel_block"));
  EXPECT_EQ(down->inputs[0], "x");
  EXPECT_FALSE(head->has_attr("channel_block"));
  EXPECT_EQ(head->inputs[0], "x");
  ExpectSameOutputs(*blocked, *plain, {1, 16, 6, 6});
}

INSTANTIATE_TEST_SUITE_P(Layouts, BlockedLayoutChain,
                         ::testing::Values(Layout{"nhwc", cpu::kChannelsLast}, Layout{"nChw16c", 16},
                                           Layout{"nChw8c", 8}),
                         [](const ::testing::TestParamInfo<Layout>& info) { return std::string(info.param.name); });

// The layout asked of oneDNN: channels-last where its AVX-512 brgemm convolutions run (on
// oneDNN 2.6, any AVX-512 core), 8-channel blocks on AVX2 and below (the ISA-capped ctest
// entries conv_layouts_avx2 / _sse41 take the second branch on any machine); and what
// TANDEM_CPU_CONV_LAYOUT overrides.
TEST(BlockedLayout, ConvChannelBlockFollowsOneDnnAndTheOverride) {
  {
    const ScopedEnv unset("TANDEM_CPU_CONV_LAYOUT", "");
    EXPECT_EQ(cpu::ConvChannelBlock(), cpu::Avx512Allowed() ? cpu::kChannelsLast : 8);
  }
  const std::pair<const char*, int> overrides[] = {{"nhwc", cpu::kChannelsLast}, {"nChw16c", 16}, {"nChw8c", 8}, {"nchw", 0}};
  for (const auto& [value, block] : overrides) {
    const ScopedEnv env("TANDEM_CPU_CONV_LAYOUT", value);
    EXPECT_EQ(cpu::ConvChannelBlock(), block) << value;
  }
  int preferred;
  {
    const ScopedEnv unset("TANDEM_CPU_CONV_LAYOUT", "");
    preferred = cpu::ConvChannelBlock();
  }
  const ScopedEnv bogus("TANDEM_CPU_CONV_LAYOUT", "NHWC16");
  EXPECT_EQ(cpu::ConvChannelBlock(), preferred) << "an unknown value is ignored";
}

// The stem rule (UseChannelBlockedLayout's image_block) only where the pool alone reads
// the convolution: not when its output is also returned, nor without an image block.
TEST(BlockedLayout, StemConvWritesImageBlocksOnlyForItsPool) {
  auto stem_blocks = [](bool r_output, int image_block) {
    Graph g = ImportTestModel(StemModel(false, r_output));
    for (Node& n : g.nodes) n.provider = "cpu";
    EXPECT_EQ(cpu::UseChannelBlockedLayout(g, "cpu", cpu::kChannelsLast, image_block), 3);  // conv0, pool, conv1
    return std::make_pair(FindNode(g, "conv0")->attr_int("channel_block", 0),
                          FindNode(g, "pool")->attr_int("input_channel_block", 0));
  };
  EXPECT_EQ(stem_blocks(false, 16), std::make_pair(int64_t{16}, int64_t{16}));
  EXPECT_EQ(stem_blocks(false, 8), std::make_pair(int64_t{8}, int64_t{8}));
  EXPECT_EQ(stem_blocks(false, 0), std::make_pair(int64_t{cpu::kChannelsLast}, int64_t{0}));
  EXPECT_EQ(stem_blocks(true, 16), std::make_pair(int64_t{cpu::kChannelsLast}, int64_t{0}));
}

// Only a mean over both spatial axes that keeps them is a GlobalAveragePool: x[1,4,6,6] ->
// Conv 16 = c -> ReduceMean(axes, keepdims) = m stays a ReduceMean otherwise.
TEST(BlockedLayout, OtherReduceMeansStayApart) {
  const std::vector<std::pair<std::vector<int64_t>, int64_t>> cases = {
      {{2, 3}, 0}, {{1, 2}, 1}, {{3}, 1}, {{-1, 2}, 1}, {{2, 3}, 1}};
  for (const auto& [axes, keepdims] : cases) {
    onnx::ModelProto m = EmptyModel(13, "means");
    auto* g = m.mutable_graph();
    SetFloatType(g->add_input(), "x", {1, 4, 6, 6});
    AddFloatInitializer(g, "w", {16, 4, 3, 3}, 0.05f);
    AddPaddedConv(g, "conv", {"x", "w"}, "c", 1);
    auto* mean = AddNode(g, "ReduceMean", "mean", {"c"}, {"m"});
    AddIntsAttribute(mean, "axes", axes);
    AddIntAttribute(mean, "keepdims", keepdims);
    std::vector<int64_t> dims;  // c's [1, 16, 6, 6] reduced
    for (int64_t d = 0; d < 4; ++d) {
      const bool reduced = std::count(axes.begin(), axes.end(), d) || std::count(axes.begin(), axes.end(), d - 4);
      if (!reduced) dims.push_back(d == 0 ? 1 : d == 1 ? 16 : 6);
      else if (keepdims) dims.push_back(1);
    }
    SetFloatType(g->add_output(), "m", dims);
    Graph graph = ImportTestModel(m);
    for (Node& n : graph.nodes) n.provider = "cpu";
    cpu::UseChannelBlockedLayout(graph, "cpu", 8);
    const bool spatial = (axes == std::vector<int64_t>{2, 3} || axes == std::vector<int64_t>{-1, 2}) && keepdims == 1;
    EXPECT_EQ(FindNode(graph, "mean")->op_type, spatial ? "GlobalAveragePool" : "ReduceMean")
        << "axes " << axes[0] << (axes.size() > 1 ? "," + std::to_string(axes[1]) : "") << " keepdims " << keepdims;
  }
}

TEST(BlockedLayout, LeavesOtherProvidersAndTrainingGraphsAlone) {
  Graph g = ImportChain();
  for (Node& n : g.nodes) n.provider = n.name == "conv1" ? "elsewhere" : "cpu";
  Graph training = g;
  // conv0, relu0, conv2, conv3, relu3, pool3: the rest reads conv1's plain output.
  EXPECT_EQ(cpu::UseChannelBlockedLayout(g, "cpu", 8), 6);
  const Node* conv1 = FindNode(g, "conv1");
  EXPECT_FALSE(conv1->has_attr("channel_block"));
  EXPECT_EQ(conv1->inputs[0], "r0");  // plain, from a FromBlocked placed before it
  bool r0_unblocked_first = false;
  for (const Node& n : g.nodes) {
    if (n.name == "conv1") break;
    r0_unblocked_first |= n.op_type == "FromBlocked" && n.outputs[0] == "r0";
  }
  EXPECT_TRUE(r0_unblocked_first);
  EXPECT_FALSE(FindNode(g, "add")->has_attr("channel_block"));  // c1 arrives plain

  Node grad;
  grad.name = "g";
  grad.op_type = "ReluGrad";
  grad.domain = kTandemDomain;
  grad.provider = "cpu";
  training.nodes.push_back(grad);
  EXPECT_EQ(cpu::UseChannelBlockedLayout(training, "cpu", 8), 0);
}

}  // namespace
}  // namespace tandem
