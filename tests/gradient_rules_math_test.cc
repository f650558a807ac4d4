// Gradient rules of unary math/activations, softmax and data-movement ops against float64
// central finite differences (training/rules/elementwise.cc, shape.cc, softmax.cc), plus
// direct checks for Cast and training-mode Dropout, which a single float64 node cannot show.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/session.h"
#include "tests/gradient_check.h"
#include "training/gradient_builder.h"

namespace tandem::testing {
namespace {

Tensor I64(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())});
}

GradCase Unary(const std::string& op, Dims dims, double lo = -1.0, double hi = 1.0, int opset = 17) {
  GradCase c;
  c.op = op;
  c.opset = opset;
  c.inputs = {RandomDoubles(dims, 11, lo, hi)};
  return c;
}

// ---- elementwise ----

TEST(GradientMathRules, PowWithBroadcast) {
  GradCase c;
  c.op = "Pow";
  c.inputs = {RandomDoubles({2, 3}, 1, 0.5, 2.0), RandomDoubles({3}, 2, -1.5, 2.5)};
  EXPECT_EQ(CheckGradients(c), "");
  c.inputs = {RandomDoubles({3}, 3, 0.5, 2.0), RandomDoubles({2, 1, 3}, 4, 0.5, 2.0)};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, PowIntegerExponent) {
  GradCase c;
  c.op = "Pow";
  c.opset = 15;
  c.inputs = {RandomDoubles({2, 3}, 5, -2.0, 2.0), I64({3})};  // exponent is a constant
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, SqrtExpLog) {
  EXPECT_EQ(CheckGradients(Unary("Sqrt", {3, 4}, 0.3, 3.0)), "");
  EXPECT_EQ(CheckGradients(Unary("Exp", {3, 4}, -2.0, 2.0)), "");
  EXPECT_EQ(CheckGradients(Unary("Log", {3, 4}, 0.2, 4.0)), "");
}

TEST(GradientMathRules, Abs) { EXPECT_EQ(CheckGradients(Unary("Abs", {4, 5})), ""); }

TEST(GradientMathRules, LeakyReluDefaultAndCustomAlpha) {
  EXPECT_EQ(CheckGradients(Unary("LeakyRelu", {4, 5})), "");
  GradCase c = Unary("LeakyRelu", {2, 3, 4});
  c.attributes["alpha"] = FloatAttr(0.3f);
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, EluDefaultAndCustomAlpha) {
  EXPECT_EQ(CheckGradients(Unary("Elu", {4, 5}, -2.0, 2.0)), "");
  GradCase c = Unary("Elu", {2, 3, 4}, -2.0, 2.0);
  c.attributes["alpha"] = FloatAttr(0.6f);
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, ErfAndGelu) {
  EXPECT_EQ(CheckGradients(Unary("Erf", {3, 4}, -2.0, 2.0)), "");
  GradCase gelu = Unary("Gelu", {3, 5}, -3.0, 3.0, 20);
  EXPECT_EQ(CheckGradients(gelu), "") << "erf form";
  gelu.attributes["approximate"] = StringAttr("tanh");
  EXPECT_EQ(CheckGradients(gelu), "") << "tanh form";
}

TEST(GradientMathRules, PadConstantMode) {
  GradCase c;
  c.op = "Pad";
  c.opset = 11;
  c.inputs = {RandomDoubles({2, 3, 4}, 21), I64({0, 1, -1, 1, 2, 0})};  // pads and a crop
  EXPECT_EQ(CheckGradients(c), "") << "opset 11";
  c.opset = 18;
  c.inputs = {RandomDoubles({2, 3, 4}, 22), I64({2, -1, 1, 3}), Tensor::Scalar<double>(0.5), I64({2, 0})};
  c.differentiate = {true, false, false, false};  // the constant value has no gradient here
  EXPECT_EQ(CheckGradients(c), "") << "opset 18 with axes and a constant value";
  c.opset = 10;
  c.inputs = {RandomDoubles({3, 4}, 23)};
  c.differentiate = {};
  c.attributes["pads"] = IntsAttr({1, 0, 2, 1});
  EXPECT_EQ(CheckGradients(c), "") << "opset 10 (pads attribute)";
}

TEST(GradientMathRules, PadReflectEdgeWrapModes) {
  // Pads wider than reflect's period and a crop on another axis; opset 19 has wrap.
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    GradCase c;
    c.op = "Pad";
    c.opset = 19;
    c.attributes["mode"] = StringAttr(mode);
    c.inputs = {RandomDoubles({2, 3, 4}, 24), I64({0, 4, 2, 1, 3, -1})};
    EXPECT_EQ(CheckGradients(c), "") << mode;
    c.inputs = {RandomDoubles({2, 3, 4}, 25), I64({3, 1, 2, 2}), Tensor(), I64({-1, 1})};
    c.differentiate = {true, false, false, false};
    EXPECT_EQ(CheckGradients(c), "") << mode << " with axes";
  }
  GradCase old;
  old.op = "Pad";
  old.opset = 10;
  old.attributes["mode"] = StringAttr("reflect");
  old.attributes["pads"] = IntsAttr({1, 2, 2, 1});
  old.inputs = {RandomDoubles({3, 4}, 26)};
  EXPECT_EQ(CheckGradients(old), "") << "opset 10 reflect";
}

// Resize / Upsample through ResizeGrad: nearest and linear taps, up- and downsampling,
// the coordinate modes PyTorch and Keras export, and scales as well as sizes.
TEST(GradientMathRules, ResizeAndUpsample) {
  auto floats = [](std::vector<float> v) { return Tensor::FromVector<float>(v, {static_cast<int64_t>(v.size())}); };
  struct Variant { const char* mode; const char* coord; std::vector<float> scales; };
  for (const Variant& v : {Variant{"nearest", "asymmetric", {1, 1, 2, 3}}, Variant{"linear", "half_pixel", {1, 1, 2, 1.5}},
                           Variant{"linear", "align_corners", {1, 1, 0.5, 2}}, Variant{"linear", "pytorch_half_pixel", {1, 1, 1.5, 0.75}},
                           Variant{"nearest", "half_pixel", {1, 1, 0.5, 0.5}}}) {
    GradCase c;
    c.op = "Resize";
    c.opset = 13;
    c.attributes["mode"] = StringAttr(v.mode);
    c.attributes["coordinate_transformation_mode"] = StringAttr(v.coord);
    c.inputs = {RandomDoubles({1, 2, 4, 4}, 27), Tensor::FromVector<float>({}, {0}), floats(v.scales)};
    c.differentiate = {true, false, false};
    EXPECT_EQ(CheckGradients(c), "") << v.mode << " " << v.coord;
  }
  GradCase sizes;
  sizes.op = "Resize";
  sizes.opset = 13;
  sizes.attributes["mode"] = StringAttr("linear");
  sizes.inputs = {RandomDoubles({1, 1, 3, 5}, 28), Tensor(), Tensor(), I64({1, 1, 7, 2})};
  sizes.differentiate = {true, false, false, false};
  EXPECT_EQ(CheckGradients(sizes), "") << "sizes";
  GradCase up;
  up.op = "Upsample";
  up.opset = 9;
  up.attributes["mode"] = StringAttr("linear");
  up.inputs = {RandomDoubles({1, 1, 3, 3}, 29), floats({1, 1, 2, 2})};
  up.differentiate = {true, false};
  EXPECT_EQ(CheckGradients(up), "") << "Upsample";
}

TEST(GradientMathRules, TanhSigmoidSoftplus) {
  EXPECT_EQ(CheckGradients(Unary("Tanh", {3, 5}, -2.0, 2.0)), "");
  EXPECT_EQ(CheckGradients(Unary("Sigmoid", {3, 5}, -3.0, 3.0)), "");
  EXPECT_EQ(CheckGradients(Unary("Softplus", {3, 5}, -3.0, 3.0)), "");
}

// ---- softmax ----

GradCase Softmax(const std::string& op, int opset, const int64_t* axis) {
  GradCase c = Unary(op, {2, 3, 4}, -2.0, 2.0, opset);
  if (axis) c.attributes["axis"] = IntAttr(*axis);
  return c;
}

TEST(GradientMathRules, SoftmaxOpset13SingleAxis) {
  const int64_t a1 = 1, am3 = -3;
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 13, nullptr)), "");  // axis -1
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 13, &a1)), "");
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 13, &am3)), "");
}

TEST(GradientMathRules, SoftmaxOpset11CoercedTo2D) {
  const int64_t a0 = 0, a2 = 2, am2 = -2;
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 11, nullptr)), "");  // axis 1: last 2 dims
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 11, &a0)), "");
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 11, &a2)), "");
  EXPECT_EQ(CheckGradients(Softmax("Softmax", 11, &am2)), "");
}

TEST(GradientMathRules, LogSoftmaxBothSemantics) {
  const int64_t a1 = 1, a0 = 0;
  EXPECT_EQ(CheckGradients(Softmax("LogSoftmax", 13, nullptr)), "");
  EXPECT_EQ(CheckGradients(Softmax("LogSoftmax", 13, &a1)), "");
  EXPECT_EQ(CheckGradients(Softmax("LogSoftmax", 11, nullptr)), "");
  EXPECT_EQ(CheckGradients(Softmax("LogSoftmax", 11, &a0)), "");
}

// ---- shape ops ----

TEST(GradientMathRules, FlattenAxes) {
  GradCase c = Unary("Flatten", {2, 3, 4});
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes["axis"] = IntAttr(-1);
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes["axis"] = IntAttr(0);
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, Reshape) {
  GradCase c = Unary("Reshape", {2, 3, 4});
  c.inputs.push_back(I64({4, -1, 2}));
  EXPECT_EQ(CheckGradients(c), "");
  c.opset = 13;
  c.inputs[1] = I64({0, 12});  // 0 copies the input dim
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, TransposePermAndDefault) {
  GradCase c = Unary("Transpose", {2, 3, 4});
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes["perm"] = IntsAttr({1, 2, 0});
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, SqueezeAttributeAndInput) {
  GradCase c = Unary("Squeeze", {2, 1, 3, 1}, -1.0, 1.0, 11);
  c.attributes["axes"] = IntsAttr({-1, 1});
  EXPECT_EQ(CheckGradients(c), "");
  GradCase d = Unary("Squeeze", {2, 1, 3, 1}, -1.0, 1.0, 13);
  d.inputs.push_back(I64({3}));
  EXPECT_EQ(CheckGradients(d), "");
  GradCase e = Unary("Squeeze", {1, 3, 1}, -1.0, 1.0, 13);  // no axes: all size-1 dims
  EXPECT_EQ(CheckGradients(e), "");
}

TEST(GradientMathRules, UnsqueezeAttributeAndInput) {
  GradCase c = Unary("Unsqueeze", {2, 3}, -1.0, 1.0, 11);
  c.attributes["axes"] = IntsAttr({0, 3});
  EXPECT_EQ(CheckGradients(c), "");
  GradCase d = Unary("Unsqueeze", {2, 3}, -1.0, 1.0, 13);
  d.inputs.push_back(I64({-1, 1}));
  EXPECT_EQ(CheckGradients(d), "");
}

TEST(GradientMathRules, ConcatNegativeAxis) {
  GradCase c;
  c.op = "Concat";
  c.inputs = {RandomDoubles({2, 1, 3}, 1), RandomDoubles({2, 4, 3}, 2), RandomDoubles({2, 2, 3}, 3)};
  c.attributes["axis"] = IntAttr(-2);
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes["axis"] = IntAttr(2);
  c.inputs = {RandomDoubles({2, 3, 2}, 4), RandomDoubles({2, 3, 1}, 5)};
  c.differentiate = {false, true};  // only some inputs want gradients
  EXPECT_EQ(CheckGradients(c), "");
}

GradCase SplitCase(int opset, int loss_output, int num_outputs) {
  GradCase c = Unary("Split", {2, 7, 3}, -1.0, 1.0, opset);
  c.attributes["axis"] = IntAttr(-2);
  c.num_outputs = num_outputs;
  c.loss_output = loss_output;
  return c;
}

TEST(GradientMathRules, SplitAttributeOpset11) {
  for (int out = 0; out < 2; ++out) {
    GradCase c = SplitCase(11, out, 2);
    c.attributes["split"] = IntsAttr({5, 2});
    EXPECT_EQ(CheckGradients(c), "") << "output " << out;
  }
}

TEST(GradientMathRules, SplitInputOpset13) {
  GradCase c = SplitCase(13, 2, 3);
  c.inputs.push_back(I64({1, 4, 2}));
  EXPECT_EQ(CheckGradients(c), "");
  GradCase d = Unary("Split", {6, 2}, -1.0, 1.0, 13);  // equal parts along axis 0
  d.num_outputs = 3;
  d.loss_output = 1;
  EXPECT_EQ(CheckGradients(d), "");
}

TEST(GradientMathRules, SplitNumOutputsOpset18) {
  GradCase c = SplitCase(18, 2, 3);  // 7 = 3 + 3 + 1
  c.attributes["num_outputs"] = IntAttr(3);
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, SliceAttributesOpset9) {
  GradCase c = Unary("Slice", {4, 5, 3}, -1.0, 1.0, 9);
  c.attributes["starts"] = IntsAttr({1, -4});
  c.attributes["ends"] = IntsAttr({100, -1});
  c.attributes["axes"] = IntsAttr({0, 1});
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes.erase("axes");
  c.attributes["starts"] = IntsAttr({0, 2});
  c.attributes["ends"] = IntsAttr({2, 5});
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, SliceInputsWithStepsOpset13) {
  GradCase c = Unary("Slice", {4, 6, 3}, -1.0, 1.0, 13);
  c.inputs.push_back(I64({-1, 1}));   // starts
  c.inputs.push_back(I64({-100, 6}));  // ends
  c.inputs.push_back(I64({-2, 0}));    // axes
  c.inputs.push_back(I64({-2, 2}));    // steps
  EXPECT_EQ(CheckGradients(c), "");
  GradCase d = Unary("Slice", {4, 6}, -1.0, 1.0, 13);  // no axes/steps
  d.inputs.push_back(I64({1}));
  d.inputs.push_back(I64({3}));
  EXPECT_EQ(CheckGradients(d), "");
}

TEST(GradientMathRules, GatherRepeatedAndNegativeIndices) {
  GradCase c;
  c.op = "Gather";
  c.inputs = {RandomDoubles({3, 4, 2}, 7), Tensor::FromVector<int64_t>({1, -1, 1, 0, 3, 1}, {2, 3})};
  c.attributes["axis"] = IntAttr(1);
  EXPECT_EQ(CheckGradients(c), "");
  c.inputs[1] = Tensor::FromVector<int32_t>({2, 2, -3}, {3});
  c.attributes["axis"] = IntAttr(-3);
  EXPECT_EQ(CheckGradients(c), "");
  c.inputs[1] = Tensor::FromVector<int64_t>({1}, {});  // scalar index drops the axis
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, WhereWithBroadcast) {
  GradCase c;
  c.op = "Where";
  std::vector<bool> cond = {true, false, false, true, true, true, false, false};
  c.inputs = {Tensor::FromVector<bool>(cond, {2, 1, 4}), RandomDoubles({3, 4}, 8),
              RandomDoubles({2, 3, 1}, 9)};
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, ClipInputsOpset13) {
  GradCase c = Unary("Clip", {4, 5}, -1.0, 1.0, 13);
  c.inputs.push_back(Tensor::Scalar<double>(-0.3));
  c.inputs.push_back(Tensor::Scalar<double>(0.45));
  EXPECT_EQ(CheckGradients(c), "");          // X, min and max
  c.differentiate = {true, false, false};    // X only
  EXPECT_EQ(CheckGradients(c), "");
  GradCase d = Unary("Clip", {4, 5}, -1.0, 1.0, 13);
  d.inputs.push_back(Tensor());              // no min
  d.inputs.push_back(Tensor::Scalar<double>(0.2));
  EXPECT_EQ(CheckGradients(d), "");
  GradCase e = Unary("Clip", {4, 5}, -1.0, 1.0, 13);
  e.inputs.push_back(Tensor::Scalar<double>(0.5));
  e.inputs.push_back(Tensor::Scalar<double>(-0.5));  // min > max: everything is max
  EXPECT_EQ(CheckGradients(e), "");
}

TEST(GradientMathRules, ClipAttributesOpset10) {
  GradCase c = Unary("Clip", {4, 5}, -1.0, 1.0, 10);  // the loss seed needs Expand (8)
  c.attributes["min"] = FloatAttr(-0.25f);
  c.attributes["max"] = FloatAttr(0.6f);
  EXPECT_EQ(CheckGradients(c), "");
  c.attributes.erase("min");
  EXPECT_EQ(CheckGradients(c), "");
}

TEST(GradientMathRules, DropoutInferenceIsIdentity) {
  GradCase c = Unary("Dropout", {3, 4}, -1.0, 1.0, 10);  // opset < 12 never trains
  c.attributes["ratio"] = FloatAttr(0.3f);
  EXPECT_EQ(CheckGradients(c), "");
  GradCase d = Unary("Dropout", {3, 4}, -1.0, 1.0, 13);   // no training_mode
  d.num_outputs = 2;
  EXPECT_EQ(CheckGradients(d), "");
  GradCase e = Unary("Dropout", {3, 4}, -1.0, 1.0, 13);   // training_mode = false
  e.inputs.push_back(Tensor::FromVector<float>({0.4f}, {}));
  e.inputs.push_back(Tensor::FromVector<bool>({false}, {}));
  e.num_outputs = 2;
  EXPECT_EQ(CheckGradients(e), "");
  // Training mode with ratio 0 (a model exported with dropout 0): the identity, without the
  // mask (no output 1 here, which a dropping Dropout's rule needs).
  GradCase f = Unary("Dropout", {3, 4}, -1.0, 1.0, 13);
  f.inputs.push_back(Tensor::FromVector<float>({0.f}, {}));
  f.inputs.push_back(Tensor::FromVector<bool>({true}, {}));
  EXPECT_EQ(CheckGradients(f), "");
}

// ---- multi-node checks ----

// Runs graph `g` with gradients of "loss" w.r.t. "x" appended; returns the outputs of g
// followed by dloss/dx.
absl::StatusOr<std::vector<Tensor>> RunWithGradient(Graph g, const Tensor& x) {
  auto grads = training::AddGradients(g, "loss", {"x"});
  if (!grads.ok()) return grads.status();
  if (!grads->count("x")) return absl::InternalError("no gradient for x");
  g.outputs.push_back(ValueInfo{grads->at("x"), DataType::kUndefined, Shape::Unknown()});
  SessionOptions options;
  options.num_threads = 1;
  options.constant_folding = false;
  auto s = Session::FromGraph(g, options);
  if (!s.ok()) return s.status();
  return (*s)->Run({{"x", x}});
}

Node MakeNode(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
              std::map<std::string, Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.name = op + "_" + out[0];
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  n.attributes = std::move(attrs);
  return n;
}

// loss = ReduceSum(y * w) over a graph already producing `y` from input `x`.
void AddLoss(Graph& g, const Tensor& w) {
  g.initializers["w"] = w;
  g.nodes.push_back(MakeNode("Mul", {"y", "w"}, {"yw"}));
  g.nodes.push_back(MakeNode("ReduceSum", {"yw"}, {"loss"}, {{"keepdims", IntAttr(0)}}));
  g.outputs.push_back(ValueInfo{"loss", DataType::kDouble, Shape::Of({})});
}

TEST(GradientMathRules, CastGradientCastsBack) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(ValueInfo{"x", DataType::kDouble, Shape::Of({2, 3})});
  g.value_info["xf"] = ValueInfo{"xf", DataType::kFloat, Shape::Of({2, 3})};
  g.value_info["tf"] = ValueInfo{"tf", DataType::kFloat, Shape::Of({2, 3})};
  g.nodes.push_back(MakeNode("Cast", {"x"}, {"xf"}, {{"to", IntAttr(1)}}));     // to float
  g.nodes.push_back(MakeNode("Tanh", {"xf"}, {"tf"}));
  g.nodes.push_back(MakeNode("Cast", {"tf"}, {"y"}, {{"to", IntAttr(11)}}));    // back to double
  Tensor w = RandomDoubles({2, 3}, 12);
  AddLoss(g, w);
  Tensor x = RandomDoubles({2, 3}, 13);
  auto out = RunWithGradient(g, x);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& dx = out->back();
  ASSERT_EQ(dx.dtype(), DataType::kDouble);
  ASSERT_EQ(dx.dims(), x.dims());
  for (int64_t i = 0; i < x.numel(); ++i) {
    double t = std::tanh(x.data<double>()[i]);
    EXPECT_NEAR(dx.data<double>()[i], w.data<double>()[i] * (1 - t * t), 1e-6) << i;
  }
}

Graph DropoutGraph(bool with_mask) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(ValueInfo{"x", DataType::kDouble, Shape::Of({4, 8})});
  g.initializers["ratio"] = Tensor::FromVector<double>({0.3}, {});
  g.initializers["training"] = Tensor::FromVector<bool>({true}, {});
  std::vector<std::string> outs = {"y"};
  if (with_mask) outs.push_back("mask");
  g.nodes.push_back(MakeNode("Dropout", {"x", "ratio", "training"}, outs, {{"seed", IntAttr(7)}}));
  AddLoss(g, RandomDoubles({4, 8}, 14));
  if (with_mask) g.outputs.push_back(ValueInfo{"mask", DataType::kBool, Shape::Unknown()});
  return g;
}

TEST(GradientMathRules, DropoutTrainingUsesMask) {
  Graph g = DropoutGraph(true);
  const Tensor w = g.initializers["w"];
  Tensor x = RandomDoubles({4, 8}, 15, 0.5, 1.5);
  auto out = RunWithGradient(g, x);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& mask = (*out)[1];
  const Tensor& dx = (*out)[2];
  ASSERT_EQ(mask.dtype(), DataType::kBool);
  const double scale = 1.0 / (1.0 - static_cast<double>(0.3f));  // the kernels use a float ratio
  int kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    bool m = mask.data<bool>()[i];
    kept += m;
    EXPECT_NEAR(dx.data<double>()[i], m ? w.data<double>()[i] * scale : 0.0, 1e-12) << i;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, x.numel());
}

TEST(GradientMathRules, DropoutTrainingWithoutMaskIsAnError) {
  Graph g = DropoutGraph(false);
  auto grads = training::AddGradients(g, "loss", {"x"});
  ASSERT_FALSE(grads.ok());
  EXPECT_NE(std::string(grads.status().message()).find("mask"), std::string::npos) << grads.status();
}

}  // namespace
}  // namespace tandem::testing
