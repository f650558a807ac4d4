// SiLU as exporters write it, y = c * Sigmoid(c) after a Conv or a Gemm: the activation
// fusion (optimizer/activation_fusion.h) makes one FusedConv / FusedGemm with activation
// Swish (alpha 1) when the CPU runs everything, and its result matches a float64 reference
// (the convolution and the product computed here in double). A Sigmoid whose input has
// other readers stays apart.
// ctest's silu_fusion_avx2 / _sse41 run these with oneDNN and Tandem's own paths capped.
#include <cmath>
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

double Silu(double v) { return v / (1.0 + std::exp(-v)); }

// x[N,C,H,W] -> Conv(w, b) -> c; y = mul(c, Sigmoid(c)) (operands in `swapped` order) -> Flatten
// -> Gemm(gw, gb) -> g; z = g * Sigmoid(g). Outputs y and z; with `pinned`, also c.
onnx::ModelProto SiluModel(bool swapped, bool pinned) {
  onnx::ModelProto m = tandem::testing::EmptyModel(13, "silu");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {kN, kC, kH, kW});
  AddFloatInitializer(g, "w", {kM, kC, kK, kK}, 0.03f);
  AddFloatInitializer(g, "b", {kM}, 0.1f, 0.05f);
  AddFloatInitializer(g, "gw", {kM * kH * kW, 5}, 0.004f);
  AddFloatInitializer(g, "gb", {5}, 0.2f);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Sigmoid", "sig", {"c"}, {"s"});
  AddNode(g, "Mul", "mul", swapped ? std::vector<std::string>{"s", "c"} : std::vector<std::string>{"c", "s"}, {"y"});
  AddNode(g, "Flatten", "flat", {"y"}, {"f"});
  AddNode(g, "Gemm", "gemm", {"f", "gw", "gb"}, {"gy"});
  AddNode(g, "Sigmoid", "gsig", {"gy"}, {"gs"});
  AddNode(g, "Mul", "gmul", {"gy", "gs"}, {"z"});
  SetFloatType(g->add_output(), "y", {kN, kM, kH, kW});
  SetFloatType(g->add_output(), "z", {kN, 5});
  if (pinned) SetFloatType(g->add_output(), "c", {kN, kM, kH, kW});
  return m;
}

Tensor Input() {
  Tensor x = Tensor::Host(DataType::kFloat, {kN, kC, kH, kW});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * i) * 2.f;
  return x;
}

// y and z of SiluModel in float64.
void Reference(const Tensor& x, std::vector<double>& y, std::vector<double>& z) {
  const std::vector<double> w = InitializerValues(kM * kC * kK * kK, 0.03f), b = InitializerValues(kM, 0.1f, 0.05f);
  const std::vector<double> gw = InitializerValues(kM * kH * kW * 5, 0.004f), gb = InitializerValues(5, 0.2f);
  std::vector<double> xd(x.data<float>(), x.data<float>() + x.numel());
  int64_t side = 0;
  y = tandem::testing::Conv2d(xd, kN, kC, kH, w, b, kM, kK, 1, 1, &side);
  for (double& v : y) v = Silu(v);
  const int64_t f = kM * kH * kW;
  z.assign(kN * 5, 0.0);
  for (int64_t n = 0; n < kN; ++n)
    for (int64_t o = 0; o < 5; ++o) {
      double acc = gb[o];
      for (int64_t k = 0; k < f; ++k) acc += y[n * f + k] * gw[k * 5 + o];
      z[n * 5 + o] = Silu(acc);
    }
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], 2e-6 * scale) << what << " element " << i;
}

// The session's y and z on Input() against Reference.
void ExpectMatchesReference(Session& session) {
  const Tensor x = Input();
  auto out = session.Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> y, z;
  Reference(x, y, z);
  ExpectNear((*out)[0], y, "y");
  ExpectNear((*out)[1], z, "z");
}

std::unique_ptr<Session> Load(bool swapped, bool pinned) {
  const std::string bytes = Serialize(SiluModel(swapped, pinned));
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "silu");
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return nullptr;
  SessionOptions o;
  o.num_threads = 2;
  auto s = Session::FromGraph(*g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(SiluFusion, ConvAndGemmTakeSwishAndMatchFloat64) {
  for (bool swapped : {false, true}) {
    SCOPED_TRACE(swapped ? "Mul(Sigmoid(c), c)" : "Mul(c, Sigmoid(c))");
    auto session = Load(swapped, false);
    ASSERT_TRUE(session);
    std::map<std::string, const Node*> nodes;
    for (const Node& n : session->graph().nodes) nodes[n.name] = &n;
    ASSERT_TRUE(nodes.count("conv+sig+mul")) << "the Conv's SiLU was not fused";
    EXPECT_EQ(nodes["conv+sig+mul"]->op_type, "FusedConv");
    EXPECT_EQ(nodes["conv+sig+mul"]->attr_string("activation", ""), "Swish");
    EXPECT_FLOAT_EQ(nodes["conv+sig+mul"]->attr_float("activation_alpha", 0.f), 1.f);
    ASSERT_TRUE(nodes.count("gemm+gsig+gmul")) << "the Gemm's SiLU was not fused";
    EXPECT_EQ(nodes["gemm+gsig+gmul"]->op_type, "FusedGemm");
    for (const Node& n : session->graph().nodes) EXPECT_NE(n.op_type, "Sigmoid") << n.name;

    ExpectMatchesReference(*session);
  }
}

TEST(SiluFusion, OnlyWhenTheCpuRunsEverything) {
  // A session that may place nodes on another provider (a GPU has no Swish) keeps SiLU apart.
  const std::string bytes = Serialize(SiluModel(false, false));
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "silu");
  ASSERT_TRUE(g.ok()) << g.status();
  Graph kept = *g, fused = *g;
  EXPECT_EQ(FuseActivations(kept, /*silu=*/false), 0);
  EXPECT_EQ(kept.nodes.size(), g->nodes.size());
  EXPECT_EQ(FuseActivations(fused, /*silu=*/true), 2);
  EXPECT_EQ(fused.nodes.size(), g->nodes.size() - 4);
}

TEST(SiluFusion, AConvOutputWithOtherReadersKeepsItsSigmoid) {
  auto session = Load(false, true);  // c is also a graph output
  ASSERT_TRUE(session);
  int sigmoids = 0;
  for (const Node& n : session->graph().nodes) sigmoids += n.op_type == "Sigmoid";
  EXPECT_EQ(sigmoids, 1);  // the Conv's stays; the Gemm's is fused
  ExpectMatchesReference(*session);
}

}  // namespace
}  // namespace tandem
