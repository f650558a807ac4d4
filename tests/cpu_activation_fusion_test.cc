// The activations only the CPU's kernels apply, after a Conv, a Gemm and a MatMul + bias:
// SiLU as exporters write it (y = c * Sigmoid(c), operands in either order), HardSwish,
// HardSigmoid (non-default alpha and beta), Gelu (erf and tanh forms) and Mish (the op, and spelled
// out as c * Tanh(Softplus(c)), as the legacy exporter writes it). When the CPU runs
// everything, the activation fusion (optimizer/activation_fusion.h) makes one FusedConv /
// FusedGemm of each, and the CPU's MatMul + bias rewrite folds the activation into its
// FusedMatMul (the spelled-out SiLU and Mish excepted); the results match a float64 reference (the
// convolution and the products computed here in double). A value with other readers and a
// session that may use another provider keep the activation apart.
// ctest's cpu_activation_fusion_avx2 / _sse41 run these with oneDNN and Tandem's own paths capped.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onnx_import/import.h"
#include "optimizer/activation_fusion.h"
#include "runtime/session.h"
#include "tests/conv_reference.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using tandem::testing::AddFloatInitializer;
using tandem::testing::AddIntsAttribute;
using tandem::testing::AddNode;
using tandem::testing::InitializerValues;
using tandem::testing::Serialize;
using tandem::testing::SetFloatType;

constexpr int64_t kN = 2, kC = 8, kM = 16, kH = 9, kW = kH, kK = 3;  // 3x3 conv, padding 1, square
constexpr int64_t kF = kM * kH * kW;  // flattened features
constexpr float kHardSigmoidAlpha = 0.25f, kHardSigmoidBeta = 0.45f;

struct Activation {
  std::string name;               // as in fused node names' last part and ONNX op type
  std::function<double(double)> reference;
};

const std::vector<Activation>& Activations() {
  static const std::vector<Activation> all = {
      {"SiLU", [](double v) { return v / (1.0 + std::exp(-v)); }},
      {"SiLU swapped", [](double v) { return v / (1.0 + std::exp(-v)); }},
      {"HardSwish", [](double v) { return v * std::clamp(v / 6.0 + 0.5, 0.0, 1.0); }},
      {"HardSigmoid", [](double v) { return std::clamp(double{kHardSigmoidAlpha} * v + kHardSigmoidBeta, 0.0, 1.0); }},
      {"Gelu", [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }},
      {"Gelu tanh",
       [](double v) { return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))); }},
      {"Mish", [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }},
      {"Mish spelled out", [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }},
  };
  return all;
}

bool IsSilu(const std::string& act) { return act.rfind("SiLU", 0) == 0; }

// The op type of the node AddActivation writes for `act` alone (Gelu for both its forms).
std::string OpTypeOf(const std::string& act) { return act == "Gelu tanh" ? "Gelu" : act; }

// Writes activation `act` of `in` as `out` (a Sigmoid and a Mul for SiLU; Softplus, Tanh and
// Mul for Mish spelled out); `tag` names the nodes.
void AddActivation(onnx::GraphProto* g, const std::string& act, const std::string& tag, const std::string& in,
                   const std::string& out) {
  if (act == "Mish spelled out") {
    AddNode(g, "Softplus", tag + "sp", {in}, {tag + "p"});
    AddNode(g, "Tanh", tag + "tanh", {tag + "p"}, {tag + "t"});
    AddNode(g, "Mul", tag + "mul", {in, tag + "t"}, {out});
    return;
  }
  if (IsSilu(act)) {
    AddNode(g, "Sigmoid", tag + "sig", {in}, {tag + "s"});
    const bool swapped = act == "SiLU swapped";
    AddNode(g, "Mul", tag + "mul", swapped ? std::vector<std::string>{tag + "s", in} : std::vector<std::string>{in, tag + "s"},
            {out});
    return;
  }
  onnx::NodeProto* n = AddNode(g, OpTypeOf(act), tag + "act", {in}, {out});
  if (act == "Gelu tanh") {
    auto* a = n->add_attribute();
    a->set_name("approximate");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("tanh");
  }
  if (act == "HardSigmoid") {
    for (auto [name, value] : {std::pair{"alpha", kHardSigmoidAlpha}, std::pair{"beta", kHardSigmoidBeta}}) {
      auto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(value);
    }
  }
}

// x[N,C,H,W] -> Conv(w, b) -> c -> act -> y -> Flatten -> f; Gemm(f, gw, gb) -> act -> z;
// MatMul(f, mw) + mb -> act -> u. Outputs y, z, u; with `pinned`, also c.
onnx::ModelProto ActivationModel(const std::string& act, bool pinned) {
  onnx::ModelProto m = tandem::testing::EmptyModel(20, "activations");  // Gelu's first
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {kN, kC, kH, kW});
  AddFloatInitializer(g, "w", {kM, kC, kK, kK}, 0.03f);
  AddFloatInitializer(g, "b", {kM}, 0.1f, 0.05f);
  AddFloatInitializer(g, "gw", {kF, 5}, 0.004f);
  AddFloatInitializer(g, "gb", {5}, 0.2f);
  AddFloatInitializer(g, "mw", {kF, 7}, 0.005f);
  AddFloatInitializer(g, "mb", {7}, 0.3f, -0.1f);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  AddActivation(g, act, "c", "c", "y");
  AddNode(g, "Flatten", "flat", {"y"}, {"f"});
  AddNode(g, "Gemm", "gemm", {"f", "gw", "gb"}, {"gy"});
  AddActivation(g, act, "g", "gy", "z");
  AddNode(g, "MatMul", "matmul", {"f", "mw"}, {"mm"});
  AddNode(g, "Add", "bias", {"mm", "mb"}, {"ma"});
  AddActivation(g, act, "m", "ma", "u");
  SetFloatType(g->add_output(), "y", {kN, kM, kH, kW});
  SetFloatType(g->add_output(), "z", {kN, 5});
  SetFloatType(g->add_output(), "u", {kN, 7});
  if (pinned) SetFloatType(g->add_output(), "c", {kN, kM, kH, kW});
  // As exporters write them: Debian's libonnx 1.12 infers shapes up to opset 17 only.
  SetFloatType(g->add_value_info(), "f", {kN, kF});
  SetFloatType(g->add_value_info(), "mm", {kN, 7});
  return m;
}

Tensor Input() {
  Tensor x = Tensor::Host(DataType::kFloat, {kN, kC, kH, kW});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * i) * 6.f;  // past the kinks
  return x;
}

// act(f * w + b) for f [kN, kF], w [kF, cols] (initializer values of `scale`, `offset`).
std::vector<double> Dense(const std::vector<double>& f, int64_t cols, float w_scale, float b_scale, float b_offset,
                          const Activation& act) {
  const std::vector<double> w = InitializerValues(kF * cols, w_scale), b = InitializerValues(cols, b_scale, b_offset);
  std::vector<double> out(kN * cols);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t o = 0; o < cols; ++o) {
      double acc = b[o];
      for (int64_t k = 0; k < kF; ++k) acc += f[n * kF + k] * w[k * cols + o];
      out[n * cols + o] = act.reference(acc);
    }
  return out;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-5 * scale) << what << " element " << i;  // sums of 1296 products
}

// The session's y, z and u on Input() against float64.
void ExpectMatchesReference(Session& session, const Activation& act) {
  const Tensor x = Input();
  auto out = session.Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> w = InitializerValues(kM * kC * kK * kK, 0.03f), b = InitializerValues(kM, 0.1f, 0.05f);
  const std::vector<double> xd(x.data<float>(), x.data<float>() + x.numel());
  int64_t side = 0;
  std::vector<double> y = tandem::testing::Conv2d(xd, kN, kC, kH, w, b, kM, kK, 1, 1, &side);
  for (double& v : y) v = act.reference(v);
  ExpectNear((*out)[0], y, "y");
  ExpectNear((*out)[1], Dense(y, 5, 0.004f, 0.2f, 0.f, act), "z");
  ExpectNear((*out)[2], Dense(y, 7, 0.005f, 0.3f, -0.1f, act), "u");
}

Graph Import(const std::string& act, bool pinned) {
  const std::string bytes = Serialize(ActivationModel(act, pinned));
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "activations");
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : Graph{};
}

std::unique_ptr<Session> Load(const std::string& act, bool pinned) {
  SessionOptions o;
  o.num_threads = 2;
  auto s = Session::FromGraph(Import(act, pinned), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::string FusedName(const std::string& producer, const std::string& act, const std::string& tag) {
  if (act == "Mish spelled out") return producer + "+" + tag + "sp+" + tag + "tanh+" + tag + "mul";
  return IsSilu(act) ? producer + "+" + tag + "sig+" + tag + "mul" : producer + "+" + tag + "act";
}

// The op the fused node names: Swish for SiLU, Mish for its spelled-out form.
std::string FusedOp(const std::string& act) {
  return IsSilu(act) ? "Swish" : act == "Mish spelled out" ? "Mish" : OpTypeOf(act);
}

TEST(CpuActivationFusion, ConvGemmAndMatMulTakeTheActivationAndMatchFloat64) {
  for (const Activation& act : Activations()) {
    SCOPED_TRACE(act.name);
    auto session = Load(act.name, false);
    ASSERT_TRUE(session);
    std::map<std::string, const Node*> nodes;
    for (const Node& n : session->graph().nodes) nodes[n.name] = &n;
    const std::string onnx_name = FusedOp(act.name);
    const bool spelled_out = onnx_name != OpTypeOf(act.name);
    const std::string conv = FusedName("conv", act.name, "c"), gemm = FusedName("gemm", act.name, "g");
    ASSERT_TRUE(nodes.count(conv)) << "the Conv's activation was not fused";
    EXPECT_EQ(nodes[conv]->op_type, "FusedConv");
    EXPECT_EQ(nodes[conv]->attr_string("activation", ""), onnx_name);
    ASSERT_TRUE(nodes.count(gemm)) << "the Gemm's activation was not fused";
    EXPECT_EQ(nodes[gemm]->op_type, "FusedGemm");
    if (onnx_name == "HardSigmoid") {
      EXPECT_FLOAT_EQ(nodes[gemm]->attr_float("activation_alpha", 0.f), kHardSigmoidAlpha);
      EXPECT_FLOAT_EQ(nodes[gemm]->attr_float("activation_beta", 0.f), kHardSigmoidBeta);
    }
    if (onnx_name == "Swish") {
      EXPECT_FLOAT_EQ(nodes[conv]->attr_float("activation_alpha", 0.f), 1.f);
    }
    const std::string form = act.name == "Gelu tanh" ? "tanh" : "none";
    EXPECT_EQ(nodes[conv]->attr_string("activation_approximate", "none"), form);
    EXPECT_EQ(nodes[gemm]->attr_string("activation_approximate", "none"), form);
    int standalone = 0;  // activation nodes left: a spelled-out one's after the MatMul + bias only
    for (const Node& n : session->graph().nodes)
      standalone += n.op_type == "Sigmoid" || n.op_type == "Softplus" || n.op_type == OpTypeOf(act.name);
    EXPECT_EQ(standalone, spelled_out ? 1 : 0);
    ExpectMatchesReference(*session, act);
  }
}

TEST(CpuActivationFusion, OnlyWhenTheCpuRunsEverything) {
  // A session that may place nodes on another provider (a GPU has none of these fused)
  // keeps them apart.
  for (const Activation& act : Activations()) {
    SCOPED_TRACE(act.name);
    const Graph g = Import(act.name, false);
    Graph kept = g, fused = g;
    EXPECT_EQ(FuseActivations(kept, FusableActivations::kEveryProvider), 0);
    EXPECT_EQ(kept.nodes.size(), g.nodes.size());
    EXPECT_EQ(FuseActivations(fused, FusableActivations::kCpu), 2);  // the MatMul's Add stands between
  }
}

TEST(CpuActivationFusion, AConvOutputWithOtherReadersKeepsItsActivation) {
  for (const Activation& act : Activations()) {
    SCOPED_TRACE(act.name);
    auto session = Load(act.name, true);  // c is also a graph output
    ASSERT_TRUE(session);
    bool conv_fused = false;
    for (const Node& n : session->graph().nodes) conv_fused |= n.name == FusedName("conv", act.name, "c");
    EXPECT_FALSE(conv_fused);
    ExpectMatchesReference(*session, act);
  }
}


// GPT-2's MLP as exporters write its Conv1D: Reshape, Gemm, Reshape, then GELU (tanh form).
// The activation moves before the second Reshape, into the Gemm; with another reader of the
// reshaped product it stays where it is. Both match float64.
onnx::ModelProto ReshapedGemmModel(bool shared) {
  onnx::ModelProto m = tandem::testing::EmptyModel(20, "reshaped_gemm");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 4, 6});
  AddFloatInitializer(g, "w", {6, 5}, 0.3f);
  AddFloatInitializer(g, "b", {5}, 0.2f, 0.1f);
  tandem::testing::AddInt64Initializer(g, "flat", {8, 6});
  tandem::testing::AddInt64Initializer(g, "shape", {2, 4, 5});
  AddNode(g, "Reshape", "in", {"x", "flat"}, {"x2"});
  AddNode(g, "Gemm", "gemm", {"x2", "w", "b"}, {"h"});
  AddNode(g, "Reshape", "out", {"h", "shape"}, {"h3"});
  AddActivation(g, "Gelu tanh", "g", "h3", "y");
  SetFloatType(g->add_output(), "y", {2, 4, 5});
  if (shared) SetFloatType(g->add_output(), "h3", {2, 4, 5});
  SetFloatType(g->add_value_info(), "x2", {8, 6});  // libonnx 1.12 infers up to opset 17 only
  SetFloatType(g->add_value_info(), "h", {8, 5});
  if (!shared) SetFloatType(g->add_value_info(), "h3", {2, 4, 5});
  return m;
}

TEST(CpuActivationFusion, AnActivationAfterAReshapedProductMovesIntoIt) {
  const Activation& gelu = Activations()[5];
  ASSERT_EQ(gelu.name, "Gelu tanh");
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "reshaped product also an output" : "activation alone reads it");
    SessionOptions o;
    o.num_threads = 2;
    auto s = Session::FromGraph(tandem::testing::ImportTestModel(ReshapedGemmModel(shared)), o);
    ASSERT_TRUE(s.ok()) << s.status();
    const std::map<std::string, int> ops = tandem::testing::OpCounts((*s)->graph());
    EXPECT_EQ(ops.count("Gelu"), shared ? 1u : 0u);
    if (!shared) {
      const Node* gemm = nullptr;
      for (const Node& n : (*s)->graph().nodes) gemm = n.op_type == "FusedGemm" ? &n : gemm;
      ASSERT_TRUE(gemm);
      EXPECT_EQ(gemm->attr_string("activation", ""), "Gelu");
      EXPECT_EQ(gemm->attr_string("activation_approximate", ""), "tanh");
    }
    Tensor x = Tensor::Host(DataType::kFloat, {2, 4, 6});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 2.f * std::sin(0.7f * i);
    auto out = (*s)->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> w = InitializerValues(30, 0.3f), b = InitializerValues(5, 0.2f, 0.1f);
    std::vector<double> want(40);
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t c = 0; c < 5; ++c) {
        double acc = b[c];
        for (int64_t k = 0; k < 6; ++k) acc += x.data<float>()[r * 6 + k] * w[k * 5 + c];
        want[r * 5 + c] = gelu.reference(acc);
      }
    ExpectNear((*out)[0], want, "y");
  }
}

}  // namespace
}  // namespace tandem
