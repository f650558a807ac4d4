// Gradient rules of the nn ops (training/rules/nn.cc) against float64 finite differences,
// and the float32 backward kernels (oneDNN) against their float64 reference loops.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/session.h"
#include "tests/gradient_check.h"
#include "training/gradient_builder.h"

namespace tandem::testing {
namespace {

// ---------------------------------------------------------------------------------------
// Finite-difference checks

TEST(GradientRulesNn, Conv2DGroupsStridesPadsDilationsBias) {
  GradCase c;
  c.op = "Conv";
  c.inputs = {RandomDoubles({2, 4, 7, 6}, 11), RandomDoubles({6, 2, 3, 3}, 12),
              RandomDoubles({6}, 13)};
  c.attributes = {{"group", IntAttr(2)},
                  {"strides", IntsAttr({2, 2})},
                  {"pads", IntsAttr({1, 0, 2, 1})},
                  {"dilations", IntsAttr({1, 2})}};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, Conv1DNoBiasAndSameUpper) {
  GradCase c;
  c.op = "Conv";
  c.opset = 13;
  c.inputs = {RandomDoubles({2, 3, 9}, 14), RandomDoubles({4, 3, 3}, 15)};
  c.attributes = {{"strides", IntsAttr({2})}, {"pads", IntsAttr({2, 1})}, {"dilations", IntsAttr({2})}};
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes = {{"strides", IntsAttr({2})}, {"auto_pad", StringAttr("SAME_UPPER")}};
  EXPECT_EQ(CheckGradients(c), "") << "SAME_UPPER";
}

TEST(GradientRulesNn, ConvTranspose2DGroupsOutputPadding) {
  GradCase c;
  c.op = "ConvTranspose";
  c.inputs = {RandomDoubles({2, 4, 3, 4}, 16), RandomDoubles({4, 3, 3, 2}, 17),
              RandomDoubles({6}, 18)};
  c.attributes = {{"group", IntAttr(2)},
                  {"strides", IntsAttr({2, 1})},
                  {"pads", IntsAttr({1, 0, 0, 1})},
                  {"output_padding", IntsAttr({1, 0})},
                  {"dilations", IntsAttr({1, 2})}};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, ConvTranspose1DOutputShape) {
  GradCase c;
  c.op = "ConvTranspose";
  c.inputs = {RandomDoubles({1, 2, 4}, 19), RandomDoubles({2, 3, 3}, 20)};
  c.attributes = {{"strides", IntsAttr({2})}, {"output_shape", IntsAttr({10})}};  // negative pad
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, MaxPoolCeilModePadsDilations) {
  GradCase c;
  c.op = "MaxPool";
  c.opset = 12;
  c.inputs = {RandomDoubles({2, 3, 7, 8}, 21)};
  c.attributes = {{"kernel_shape", IntsAttr({3, 2})},
                  {"strides", IntsAttr({2, 2})},
                  {"pads", IntsAttr({1, 0, 0, 1})},
                  {"dilations", IntsAttr({1, 2})},
                  {"ceil_mode", IntAttr(1)}};
  EXPECT_EQ(CheckGradients(c), "");
  c.num_outputs = 2;  // with the Indices output
  c.attributes.erase("dilations");
  EXPECT_EQ(CheckGradients(c), "") << "with Indices";
}

TEST(GradientRulesNn, MaxPool1DOverlapping) {
  GradCase c;
  c.op = "MaxPool";
  c.inputs = {RandomDoubles({2, 2, 11}, 22)};
  c.attributes = {{"kernel_shape", IntsAttr({3})}, {"pads", IntsAttr({1, 1})}};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, MaxPool2x2Stride2OddSize) {  // the direct plain-NCHW kernel
  GradCase c;
  c.op = "MaxPool";
  c.inputs = {RandomDoubles({2, 3, 7, 9}, 24)};
  c.attributes = {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, AveragePoolCountIncludePadCeilMode) {
  for (int include = 0; include < 2; ++include)
    for (int ceil = 0; ceil < 2; ++ceil) {
      GradCase c;
      c.op = "AveragePool";
      c.opset = 11;
      c.inputs = {RandomDoubles({2, 3, 7, 7}, 23)};
      c.attributes = {{"kernel_shape", IntsAttr({3, 3})},
                      {"strides", IntsAttr({2, 2})},
                      {"pads", IntsAttr({1, 1, 1, 0})},
                      {"count_include_pad", IntAttr(include)},
                      {"ceil_mode", IntAttr(ceil)}};
      EXPECT_EQ(CheckGradients(c), "") << "count_include_pad=" << include << " ceil_mode=" << ceil;
    }
}

TEST(GradientRulesNn, GlobalAveragePool) {
  GradCase c;
  c.op = "GlobalAveragePool";
  c.inputs = {RandomDoubles({2, 3, 4, 5}, 24)};
  EXPECT_EQ(CheckGradients(c), "");
}

GradCase BatchNorm(int training) {
  GradCase c;
  c.op = "BatchNormalization";
  c.opset = 15;
  c.inputs = {RandomDoubles({4, 3, 5, 2}, 25), RandomDoubles({3}, 26, 0.5, 1.5),
              RandomDoubles({3}, 27), RandomDoubles({3}, 28), RandomDoubles({3}, 29, 0.5, 1.5)};
  c.differentiate = {true, true, true, false, false};  // running statistics are not trained
  c.attributes = {{"epsilon", FloatAttr(1e-3f)}, {"momentum", FloatAttr(0.8f)},
                  {"training_mode", IntAttr(training)}};
  c.num_outputs = training ? 3 : 1;
  return c;
}

TEST(GradientRulesNn, BatchNormalizationTrainingMode) { EXPECT_EQ(CheckGradients(BatchNorm(1)), ""); }
TEST(GradientRulesNn, BatchNormalizationInferenceMode) { EXPECT_EQ(CheckGradients(BatchNorm(0)), ""); }

TEST(GradientRulesNn, BatchNormalizationOpset9TrainingByOutputs) {
  GradCase c = BatchNorm(1);
  c.opset = 9;  // before training_mode: the statistics outputs select training
  c.attributes.erase("training_mode");
  c.num_outputs = 5;
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, BatchNormalization2DInput) {
  GradCase c = BatchNorm(1);
  c.inputs[0] = RandomDoubles({6, 3}, 30);
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, LayerNormalizationBroadcastScaleBias) {
  GradCase c;
  c.op = "LayerNormalization";
  c.inputs = {RandomDoubles({3, 4, 5}, 31), RandomDoubles({4, 5}, 32), RandomDoubles({5}, 33)};
  c.attributes = {{"axis", IntAttr(-2)}, {"epsilon", FloatAttr(1e-3f)}};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientRulesNn, LayerNormalizationLastAxisNoBias) {
  GradCase c;
  c.op = "LayerNormalization";
  c.inputs = {RandomDoubles({2, 3, 6}, 34), RandomDoubles({6}, 35)};
  EXPECT_EQ(CheckGradients(c), "");
}

// ---------------------------------------------------------------------------------------
// Running a single node (forward or ai.tandem backward) in a session.

absl::StatusOr<std::vector<Tensor>> RunNode(const std::string& op, const std::string& domain,
                                            int opset, const std::vector<Tensor>& inputs,
                                            std::map<std::string, Attribute> attrs,
                                            int num_outputs) {
  Graph g;
  g.name = op + "_single";
  g.opsets[""] = opset;
  g.opsets["ai.tandem"] = 1;
  Node n;
  n.name = "node";
  n.op_type = op;
  n.domain = domain;
  n.attributes = std::move(attrs);
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    g.inputs.push_back(ValueInfo{name, inputs[i].dtype(), Shape::Of(inputs[i].dims())});
    feeds[name] = inputs[i];
    n.inputs.push_back(name);
  }
  for (int o = 0; o < num_outputs; ++o) {
    n.outputs.push_back("out" + std::to_string(o));
    g.outputs.push_back(ValueInfo{n.outputs.back(), DataType::kUndefined, Shape::Unknown()});
  }
  g.nodes.push_back(n);
  SessionOptions options;
  options.constant_folding = false;
  auto s = Session::FromGraph(g, options);
  if (!s.ok()) return s.status();
  return (*s)->Run(feeds);
}

TEST(GradientRulesNn, BatchNormalizationUpdatesRunningStatistics) {
  GradCase c = BatchNorm(1);
  auto out = RunNode(c.op, "", c.opset, c.inputs, c.attributes, 3);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& x = c.inputs[0];
  const int64_t N = 4, C = 3, S = 10;
  for (int64_t ch = 0; ch < C; ++ch) {
    double s = 0, q = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) s += x.data<double>()[(n * C + ch) * S + i];
    const double mean = s / (N * S);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) {
        const double d = x.data<double>()[(n * C + ch) * S + i] - mean;
        q += d * d;
      }
    const double var = q / (N * S), m = 0.8;
    EXPECT_NEAR((*out)[1].data<double>()[ch], c.inputs[3].data<double>()[ch] * m + mean * (1 - m), 1e-6);
    EXPECT_NEAR((*out)[2].data<double>()[ch], c.inputs[4].data<double>()[ch] * m + var * (1 - m), 1e-6);
  }
}

// ---------------------------------------------------------------------------------------
// float32 (oneDNN) backward kernels against the float64 reference kernels.

struct KernelCase {
  std::string op;
  std::vector<Dims> shapes;
  std::map<std::string, Attribute> attrs;
  int num_outputs;
};

// Runs `k` in float64 and float32 on the same data and compares every output.
std::string CompareFloatWithDouble(const KernelCase& k) {
  std::vector<Tensor> d, f;
  for (size_t i = 0; i < k.shapes.size(); ++i) {
    d.push_back(RandomDoubles(k.shapes[i], 100 + static_cast<unsigned>(i), 0.25, 1.25));
    // Signed data for dY and X (scale-like inputs stay positive).
    if (i < 2)
      for (int64_t e = 0; e < d.back().numel(); ++e) d.back().data<double>()[e] -= 0.75;
    f.push_back(d.back().CastTo(DataType::kFloat));
    d.back() = f.back().CastTo(DataType::kDouble);  // identical values in both runs
  }
  auto rd = RunNode(k.op, "ai.tandem", 17, d, k.attrs, k.num_outputs);
  auto rf = RunNode(k.op, "ai.tandem", 17, f, k.attrs, k.num_outputs);
  if (!rd.ok()) return "float64 run: " + std::string(rd.status().message());
  if (!rf.ok()) return "float32 run: " + std::string(rf.status().message());
  for (int o = 0; o < k.num_outputs; ++o) {
    const Tensor& a = (*rd)[o];
    const Tensor& b = (*rf)[o];
    if (a.dims() != b.dims() || b.dtype() != DataType::kFloat)
      return "output " + std::to_string(o) + " differs in shape or type";
    double amax = 0;
    for (int64_t e = 0; e < a.numel(); ++e) amax = std::max(amax, std::fabs(a.data<double>()[e]));
    for (int64_t e = 0; e < a.numel(); ++e) {
      const double want = a.data<double>()[e], got = b.data<float>()[e];
      if (std::fabs(got - want) > 1e-4 * (std::fabs(want) + 0.1 * amax) + 1e-6)
        return "output " + std::to_string(o) + " element " + std::to_string(e) + ": float32 " +
               std::to_string(got) + ", float64 " + std::to_string(want);
    }
  }
  return "";
}

TEST(GradientKernelsNn, ConvGradFloatMatchesDouble) {
  KernelCase k{"ConvGrad", {{2, 32, 5, 3}, {2, 16, 9, 8}, {32, 8, 3, 3}},
               {{"group", IntAttr(2)}, {"strides", IntsAttr({2, 2})},
                {"pads", IntsAttr({1, 1, 1, 0})}, {"dilations", IntsAttr({1, 2})}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(k), "");
  KernelCase one{"ConvGrad", {{3, 8, 6}, {3, 5, 13}, {8, 5, 3}},
                 {{"strides", IntsAttr({2})}, {"pads", IntsAttr({0, 0})}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(one), "") << "1-D";
}

TEST(GradientKernelsNn, ConvTransposeGradFloatMatchesDouble) {
  // X [2, 16, 4, 5], W [16, 8, 3, 3] with group 2 -> Y [2, 16, 8, 11]
  KernelCase k{"ConvTransposeGrad", {{2, 16, 8, 11}, {2, 16, 4, 5}, {16, 8, 3, 3}},
               {{"group", IntAttr(2)}, {"strides", IntsAttr({2, 2})},
                {"pads", IntsAttr({1, 1, 1, 0})}, {"output_padding", IntsAttr({1, 1})}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(k), "");
  KernelCase shaped{"ConvTransposeGrad", {{1, 3, 10}, {1, 2, 4}, {2, 3, 3}},
                    {{"strides", IntsAttr({2})}, {"output_shape", IntsAttr({10})}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(shaped), "") << "output_shape (reference fallback)";
}

TEST(GradientKernelsNn, PoolGradFloatMatchesDouble) {
  // Ceil mode: width 8 + end pad 1 would give a 5th window, but it would start in the
  // padding, so there are 4.
  KernelCase mx{"MaxPoolGrad", {{2, 16, 4, 4}, {2, 16, 7, 8}},
                {{"kernel_shape", IntsAttr({3, 2})}, {"strides", IntsAttr({2, 2})},
                 {"pads", IntsAttr({1, 0, 0, 1})}, {"ceil_mode", IntAttr(1)}}, 1};
  EXPECT_EQ(CompareFloatWithDouble(mx), "") << "MaxPool";
  KernelCase resnet{"MaxPoolGrad", {{2, 16, 8, 8}, {2, 16, 16, 16}},
                    {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({2, 2})},
                     {"pads", IntsAttr({1, 1, 1, 1})}}, 1};
  EXPECT_EQ(CompareFloatWithDouble(resnet), "") << "MaxPool 3x3/2";
  KernelCase two{"MaxPoolGrad", {{2, 16, 3, 4}, {2, 16, 7, 9}},
                 {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}}, 1};
  EXPECT_EQ(CompareFloatWithDouble(two), "") << "MaxPool 2x2/2";
  two.attrs["relu_mask"] = IntAttr(1);
  EXPECT_EQ(CompareFloatWithDouble(two), "") << "MaxPool 2x2/2 with relu_mask";
  KernelCase one{"AveragePoolGrad", {{2, 8, 6}, {2, 8, 11}},
                 {{"kernel_shape", IntsAttr({3})}, {"strides", IntsAttr({2})}, {"pads", IntsAttr({1, 1})}}, 1};
  EXPECT_EQ(CompareFloatWithDouble(one), "") << "AveragePool 1-D";
  for (int include = 0; include < 2; ++include) {
    KernelCase av{"AveragePoolGrad", {{2, 16, 4, 3}, {2, 16, 7, 7}},
                  {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({2, 2})},
                   {"pads", IntsAttr({1, 1, 1, 0})}, {"count_include_pad", IntAttr(include)}}, 1};
    EXPECT_EQ(CompareFloatWithDouble(av), "") << "AveragePool count_include_pad=" << include;
    av.shapes[0] = {2, 16, 4, 4};
    av.attrs["ceil_mode"] = IntAttr(1);
    EXPECT_EQ(CompareFloatWithDouble(av), "") << "AveragePool ceil_mode count_include_pad=" << include;
  }
}

// relu_mask = 1 (the fused ReluGrad) zeroes dX where X <= 0, on the direct 2x2 kernel and
// on the general paths (float32 oneDNN, float64 reference).
TEST(GradientKernelsNn, MaxPoolGradReluMask) {
  struct Geo {
    Dims dy, x;
    std::map<std::string, Attribute> attrs;
  };
  const std::vector<Geo> geos = {
      {{2, 3, 3, 4}, {2, 3, 7, 9}, {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}}},
      {{2, 3, 4, 4}, {2, 3, 7, 8}, {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({2, 2})},
                                    {"pads", IntsAttr({1, 1, 1, 1})}}}};
  for (const Geo& g : geos)
    for (DataType t : {DataType::kDouble, DataType::kFloat}) {
      Tensor dy = RandomDoubles(g.dy, 31, -1.0, 1.0).CastTo(t);
      Tensor x = RandomDoubles(g.x, 32, -1.0, 1.0).CastTo(t);
      auto plain = RunNode("MaxPoolGrad", "ai.tandem", 17, {dy, x}, g.attrs, 1);
      auto masked_attrs = g.attrs;
      masked_attrs["relu_mask"] = IntAttr(1);
      auto masked = RunNode("MaxPoolGrad", "ai.tandem", 17, {dy, x}, masked_attrs, 1);
      ASSERT_TRUE(plain.ok() && masked.ok());
      const Tensor a = (*plain)[0].CastTo(DataType::kDouble), b = (*masked)[0].CastTo(DataType::kDouble);
      const Tensor xd = x.CastTo(DataType::kDouble);
      int nonzero = 0;
      for (int64_t e = 0; e < a.numel(); ++e) {
        const double want = xd.data<double>()[e] > 0 ? a.data<double>()[e] : 0.0;
        ASSERT_EQ(b.data<double>()[e], want) << DataTypeName(t) << " element " << e;
        nonzero += want != 0;
      }
      EXPECT_GT(nonzero, 0);
    }
}

// ConvGrad / ConvTransposeGrad with relu_mask = 1: dX zeroed where X <= 0 (float32: in the
// unblocking of oneDNN's diff_src; float64: reference), dW and dB unchanged.
TEST(GradientKernelsNn, ConvGradReluMask) {
  struct Case {
    std::string op;
    std::vector<Dims> shapes;  // dY, X, W
    std::map<std::string, Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {"ConvGrad", {{2, 16, 6, 6}, {2, 12, 6, 6}, {16, 12, 3, 3}}, {{"pads", IntsAttr({1, 1, 1, 1})}}},
      {"ConvGrad", {{2, 8, 4, 4}, {2, 16, 6, 6}, {8, 16, 3, 3}}, {}},
      {"ConvTransposeGrad", {{2, 8, 11, 11}, {2, 16, 5, 5}, {16, 8, 3, 3}}, {{"strides", IntsAttr({2, 2})}}}};
  for (const Case& c : cases)
    for (DataType t : {DataType::kDouble, DataType::kFloat}) {
      std::vector<Tensor> in;
      for (size_t i = 0; i < c.shapes.size(); ++i)
        in.push_back(RandomDoubles(c.shapes[i], 40 + static_cast<unsigned>(i), -1.0, 1.0).CastTo(t));
      auto plain = RunNode(c.op, "ai.tandem", 17, in, c.attrs, 3);
      auto masked_attrs = c.attrs;
      masked_attrs["relu_mask"] = IntAttr(1);
      auto masked = RunNode(c.op, "ai.tandem", 17, in, masked_attrs, 3);
      ASSERT_TRUE(plain.ok()) << plain.status();
      ASSERT_TRUE(masked.ok()) << masked.status();
      const Tensor xd = in[1].CastTo(DataType::kDouble);
      for (int o = 0; o < 3; ++o) {
        const Tensor a = (*plain)[o].CastTo(DataType::kDouble), b = (*masked)[o].CastTo(DataType::kDouble);
        ASSERT_EQ(a.dims(), b.dims());
        for (int64_t e = 0; e < a.numel(); ++e) {
          const double want = o == 0 && xd.data<double>()[e] <= 0 ? 0.0 : a.data<double>()[e];
          ASSERT_EQ(b.data<double>()[e], want) << c.op << " " << DataTypeName(t) << " output " << o
                                               << " element " << e;
        }
      }
    }
}

TEST(GradientKernelsNn, NormGradFloatMatchesDouble) {
  KernelCase bn{"BatchNormalizationGrad", {{4, 16, 6, 5}, {4, 16, 6, 5}, {16}},
                {{"epsilon", FloatAttr(1e-5f)}, {"training_mode", IntAttr(1)}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(bn), "") << "BatchNormalization training";
  bn.shapes = {{8, 16}, {8, 16}, {16}};
  EXPECT_EQ(CompareFloatWithDouble(bn), "") << "BatchNormalization training, 2-D";
  KernelCase bni{"BatchNormalizationGrad", {{4, 16, 6, 5}, {4, 16, 6, 5}, {16}, {16}, {16}},
                 {{"epsilon", FloatAttr(1e-5f)}, {"training_mode", IntAttr(0)}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(bni), "") << "BatchNormalization inference";
  KernelCase ln{"LayerNormalizationGrad", {{6, 7, 32}, {6, 7, 32}, {32}},
                {{"axis", IntAttr(-1)}, {"epsilon", FloatAttr(1e-5f)}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(ln), "") << "LayerNormalization";
  KernelCase ln2{"LayerNormalizationGrad", {{6, 7, 32}, {6, 7, 32}, {32}},
                 {{"axis", IntAttr(1)}, {"epsilon", FloatAttr(1e-5f)}}, 3};
  EXPECT_EQ(CompareFloatWithDouble(ln2), "") << "LayerNormalization broadcast scale";
}

}  // namespace
}  // namespace tandem::testing

namespace tandem::testing {
namespace {

// A small CNN block chain: Conv -> BatchNormalization (training) -> Relu -> MaxPool ->
// ConvTranspose -> AveragePool -> LayerNormalization -> GlobalAveragePool -> weighted sum.
// Returns the graph with gradients of every parameter appended as extra outputs.
absl::StatusOr<Graph> ChainGraph(DataType t, std::vector<std::string>* params) {
  Graph g;
  g.name = "nn_chain";
  g.opsets[""] = 17;
  auto add = [&](const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                 std::map<std::string, Attribute> attrs = {}) {
    Node n;
    n.name = op + std::to_string(g.nodes.size());
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attributes = std::move(attrs);
    g.nodes.push_back(n);
  };
  const std::vector<std::pair<std::string, Dims>> inputs = {
      {"x", {2, 3, 8, 8}}, {"w1", {8, 3, 3, 3}}, {"b1", {8}},    {"scale", {8}},
      {"bias", {8}},       {"w2", {8, 2, 3, 3}}, {"ln_s", {3}},   {"lw", {2, 4, 1, 1}}};
  for (const auto& [name, dims] : inputs) g.inputs.push_back(ValueInfo{name, t, Shape::Of(dims)});
  g.inputs.push_back(ValueInfo{"mean", t, Shape::Of({8})});
  g.inputs.push_back(ValueInfo{"var", t, Shape::Of({8})});
  add("Conv", {"x", "w1", "b1"}, {"c1"}, {{"pads", IntsAttr({1, 1, 1, 1})}});
  add("BatchNormalization", {"c1", "scale", "bias", "mean", "var"}, {"bn", "rm", "rv"},
      {{"training_mode", IntAttr(1)}});
  add("Relu", {"bn"}, {"r"});
  add("MaxPool", {"r"}, {"mp"}, {{"kernel_shape", IntsAttr({2, 2})}, {"strides", IntsAttr({2, 2})}});
  add("ConvTranspose", {"mp", "w2"}, {"ct"}, {{"group", IntAttr(2)}, {"strides", IntsAttr({2, 2})},
                                              {"pads", IntsAttr({1, 1, 1, 1})}});
  add("AveragePool", {"ct"}, {"ap"}, {{"kernel_shape", IntsAttr({3, 3})}, {"strides", IntsAttr({3, 3})},
                                      {"pads", IntsAttr({1, 1, 1, 1})}, {"count_include_pad", IntAttr(1)}});
  add("LayerNormalization", {"ap", "ln_s"}, {"ln"});
  add("GlobalAveragePool", {"ln"}, {"gp"});
  add("Mul", {"gp", "lw"}, {"weighted"});
  add("ReduceSum", {"weighted"}, {"loss"}, {{"keepdims", IntAttr(0)}});
  g.outputs.push_back(ValueInfo{"loss", t, Shape::Of({})});
  *params = {"x", "w1", "b1", "scale", "bias", "w2", "ln_s"};
  auto grads = training::AddGradients(g, "loss", *params);
  if (!grads.ok()) return grads.status();
  for (const std::string& p : *params) {
    if (!grads->count(p)) return absl::InternalError("no gradient for " + p);
    g.outputs.push_back(ValueInfo{grads->at(p), DataType::kUndefined, Shape::Unknown()});
  }
  return g;
}

std::map<std::string, Tensor> ChainFeeds(DataType t) {
  std::map<std::string, Tensor> f;
  const std::vector<std::pair<std::string, Dims>> dims = {
      {"x", {2, 3, 8, 8}}, {"w1", {8, 3, 3, 3}}, {"b1", {8}},  {"scale", {8}}, {"bias", {8}},
      {"w2", {8, 2, 3, 3}}, {"ln_s", {3}},      {"lw", {2, 4, 1, 1}}, {"mean", {8}}, {"var", {8}}};
  unsigned seed = 200;
  for (const auto& [name, d] : dims) {
    Tensor v = RandomDoubles(d, seed++, name == "scale" || name == "var" ? 0.5 : -1.0, 1.5);
    f[name] = v.CastTo(DataType::kFloat).CastTo(t);
  }
  return f;
}

TEST(GradientRulesNn, CnnChainFiniteDifferencesAndFloat32) {
  std::vector<std::string> params;
  auto gd = ChainGraph(DataType::kDouble, &params);
  ASSERT_TRUE(gd.ok()) << gd.status();
  SessionOptions options;
  options.constant_folding = false;
  auto sd = Session::FromGraph(*gd, options);
  ASSERT_TRUE(sd.ok()) << sd.status();
  const auto feeds = ChainFeeds(DataType::kDouble);
  auto out = (*sd)->Run(feeds);
  ASSERT_TRUE(out.ok()) << out.status();
  // Finite differences on a few elements of each parameter (loss output only).
  const double h = 1e-6;
  for (size_t k = 0; k < params.size(); ++k) {
    const Tensor& grad = (*out)[1 + k];
    const int64_t n = feeds.at(params[k]).numel();
    for (int64_t e = 0; e < n; e += std::max<int64_t>(1, n / 5)) {
      auto plus = feeds, minus = feeds;
      plus[params[k]] = feeds.at(params[k]).Clone();
      minus[params[k]] = feeds.at(params[k]).Clone();
      plus[params[k]].data<double>()[e] += h;
      minus[params[k]].data<double>()[e] -= h;
      auto lp = (*sd)->Run(plus), lm = (*sd)->Run(minus);
      ASSERT_TRUE(lp.ok() && lm.ok());
      const double numeric = ((*lp)[0].data<double>()[0] - (*lm)[0].data<double>()[0]) / (2 * h);
      EXPECT_NEAR(grad.data<double>()[e], numeric, 1e-6 + 1e-5 * std::fabs(numeric))
          << params[k] << " element " << e;
    }
  }
  // The same training graph in float32 (oneDNN backward kernels) agrees with float64.
  auto gf = ChainGraph(DataType::kFloat, &params);
  ASSERT_TRUE(gf.ok()) << gf.status();
  auto sf = Session::FromGraph(*gf, options);
  ASSERT_TRUE(sf.ok()) << sf.status();
  auto of = (*sf)->Run(ChainFeeds(DataType::kFloat));
  ASSERT_TRUE(of.ok()) << of.status();
  for (size_t k = 0; k < params.size(); ++k) {
    const Tensor& d = (*out)[1 + k];
    const Tensor& f = (*of)[1 + k];
    ASSERT_EQ(f.dtype(), DataType::kFloat) << params[k];
    double amax = 0;
    for (int64_t e = 0; e < d.numel(); ++e) amax = std::max(amax, std::fabs(d.data<double>()[e]));
    for (int64_t e = 0; e < d.numel(); ++e)
      ASSERT_NEAR(f.data<float>()[e], d.data<double>()[e], 1e-3 * amax + 1e-6) << params[k] << " element " << e;
  }
}

}  // namespace
}  // namespace tandem::testing
