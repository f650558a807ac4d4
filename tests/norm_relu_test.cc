// The CPU's BatchNormalization + Relu rewrite (providers/cpu/rewrites/norm_relu.h): the Relu is
// gone from the planned graph and the output matches a float64 reference, on the plain
// layout and on the channel-blocked one (a densenet-style Concat feeding the
// normalization); a Relu output read elsewhere too keeps the Relu.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/dnnl_util.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using testing::PlainNode;
using testing::ScopedEnv;

Tensor Values(const Dims& dims, double phase, double scale = 1.0) {
  std::vector<float> v(static_cast<size_t>(NumElements(dims)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return Tensor::FromVector(v, dims);
}


// BatchNormalization parameters for C channels (variance positive).
void AddNormParameters(Graph& g, int64_t c) {
  g.initializers["scale"] = Values({c}, 0.1);
  g.initializers["bias"] = Values({c}, 0.7);
  g.initializers["mean"] = Values({c}, 1.3, 0.5);
  Tensor var = Values({c}, 2.1);
  for (int64_t i = 0; i < c; ++i) var.data<float>()[i] = 0.5f + std::fabs(var.data<float>()[i]);
  g.initializers["var"] = var;
}

// max((x - mean) / sqrt(var + 1e-5) * scale + bias, 0) in double, x [N, C, S...] plain.
std::vector<double> Reference(const Tensor& x, const Graph& g) {
  const int64_t c = x.dim(1), s = x.numel() / x.dim(0) / c;
  const float *sc = g.initializers.at("scale").data<float>(), *b = g.initializers.at("bias").data<float>(),
              *mu = g.initializers.at("mean").data<float>(), *va = g.initializers.at("var").data<float>();
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t ch = (i / s) % c;
    const double v = (x.data<float>()[i] - mu[ch]) / std::sqrt(static_cast<double>(va[ch]) + 1e-5) * sc[ch] + b[ch];
    y[static_cast<size_t>(i)] = v > 0 ? v : 0;
  }
  return y;
}

int CountOps(const Session& s, const std::string& op) {
  int n = 0;
  for (const Node& node : s.graph().nodes) n += node.op_type == op;
  return n;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-6 * scale) << "element " << i;
}

TEST(BatchNormRelu, PlainLayoutFoldsTheRelu) {
  const Dims dims = {2, 5, 3, 4};
  Graph g;
  g.name = "bn_relu";
  g.opsets[""] = 15;
  g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of(dims)});
  AddNormParameters(g, 5);
  g.nodes = {PlainNode("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}), PlainNode("Relu", {"n"}, {"y"})};
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Of(dims)});
  SessionOptions o;
  o.providers = {"cpu"};
  auto s = Session::FromGraph(g, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(CountOps(**s, "Relu"), 0) << "the Relu was not folded";
  const Tensor x = Values(dims, 0.2, 2.0);
  auto y = (*s)->Run({{"x", x}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear((*y)[0], Reference(x, g));
}

// x -> Conv (16 channels: blocked) and Conv -> Concat (32) -> BatchNormalization -> Relu.
void ChannelBlockedLayoutFoldsTheRelu() {
  const Dims dims = {1, 3, 6, 6};
  Graph g;
  g.name = "concat_bn_relu";
  g.opsets[""] = 15;
  g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of(dims)});
  g.initializers["w1"] = Values({16, 3, 1, 1}, 0.3);
  g.initializers["w2"] = Values({16, 3, 1, 1}, 0.9);
  AddNormParameters(g, 32);
  Node cat = PlainNode("Concat", {"c1", "c2"}, {"cat"});
  cat.attributes["axis"] = IntAttribute(1);
  g.nodes = {PlainNode("Conv", {"x", "w1"}, {"c1"}), PlainNode("Conv", {"x", "w2"}, {"c2"}), cat,
             PlainNode("BatchNormalization", {"cat", "scale", "bias", "mean", "var"}, {"n"}), PlainNode("Relu", {"n"}, {"y"})};
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Of({1, 32, 6, 6})});
  SessionOptions o;
  o.providers = {"cpu"};
  auto s = Session::FromGraph(g, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(CountOps(**s, "Relu"), 0) << "the Relu was not folded";
  for (const Node& n : (*s)->graph().nodes) {
    if (n.op_type == "BatchNormalization") {
      EXPECT_EQ(n.attr_int("channel_block", 0), cpu::ConvChannelBlock()) << "not the blocked path";
    }
  }
  // The reference: the Concat computed without the normalization (a second session).
  Graph convs = g;
  convs.nodes.resize(3);
  convs.outputs = {ValueInfo{"cat", DataType::kFloat, Shape::Of({1, 32, 6, 6})}};
  auto sc = Session::FromGraph(convs, o);
  ASSERT_TRUE(sc.ok()) << sc.status();
  const Tensor x = Values(dims, 0.4, 1.5);
  auto cat_value = (*sc)->Run({{"x", x}});
  ASSERT_TRUE(cat_value.ok()) << cat_value.status();
  auto y = (*s)->Run({{"x", x}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear((*y)[0], Reference((*cat_value)[0], g));
}

// Under each layout of the blocked-layout pass (TANDEM_CPU_CONV_LAYOUT).
TEST(BatchNormRelu, ChannelBlockedLayoutFoldsTheRelu) {
  for (const char* layout : {"nhwc", "nChw16c", "nChw8c"}) {
    SCOPED_TRACE(layout);
    const ScopedEnv env("TANDEM_CPU_CONV_LAYOUT", layout);
    ChannelBlockedLayoutFoldsTheRelu();
  }
}

TEST(BatchNormRelu, NormalizedValueReadElsewhereKeepsTheRelu) {
  const Dims dims = {1, 4, 5};
  Graph g;
  g.name = "bn_two_readers";
  g.opsets[""] = 15;
  g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of(dims)});
  AddNormParameters(g, 4);
  g.nodes = {PlainNode("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}), PlainNode("Relu", {"n"}, {"y"})};
  g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Of(dims)}, ValueInfo{"n", DataType::kFloat, Shape::Of(dims)}};
  SessionOptions o;
  o.providers = {"cpu"};
  auto s = Session::FromGraph(g, o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(CountOps(**s, "Relu"), 1);
  auto y = (*s)->Run({{"x", Values(dims, 0.6, 2.0)}});
  ASSERT_TRUE(y.ok()) << y.status();
  ExpectNear((*y)[0], Reference(Values(dims, 0.6, 2.0), g));
}

}  // namespace
}  // namespace tandem
