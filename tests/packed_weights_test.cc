// Constant weights packed once per initializer and form and shared between kernels
// (providers/cpu/packed_weights.h): two convolutions reading one initializer (and
// two reading two initializers of one shape, which must not share), two
// sessions made from one graph (the second still right after the first is gone), two Gemms
// reading one B through oneDNN and two MatMuls of 2 rows through the skinny path. Outputs
// against float64 sums; the counters show one copy made and the other kernels sharing it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/cpu_isa.h"
#include "providers/cpu/kernels/math/packed_matmul_weights.h"
#include "providers/cpu/microkernels/skinny_gemm.h"
#include "providers/cpu/microkernels/small_gemm.h"
#include "providers/cpu/packed_weights.h"
#include "runtime/session.h"
#include "tests/conv_reference.h"
#include "tests/gemm_test_util.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

constexpr int64_t kC = 16, kH = 8;  // the convolutions
constexpr int64_t kK = 288, kN = 160;  // the matrix products' B

constexpr float kW2Offset = 0.004f;  // the untied second weights: the first's values + this

// x[1,16,8,8] -> Relu(Conv 3x3 (x; w, b0)) -> Conv 3x3 (.; w or w2, b1) = y: tied, both
// convolutions read initializer w; untied, the second reads w2 of the same shape.
onnx::ModelProto TiedConvModel(bool tied = true) {
  onnx::ModelProto m = EmptyModel(13, "tied");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, kC, kH, kH});
  AddFloatInitializer(g, "w", {kC, kC, 3, 3}, 0.02f, 0.001f);
  if (!tied) AddFloatInitializer(g, "w2", {kC, kC, 3, 3}, 0.02f, 0.001f + kW2Offset);
  AddFloatInitializer(g, "b0", {kC}, 0.01f, 0.02f);
  AddFloatInitializer(g, "b1", {kC}, 0.03f);
  AddPaddedConv(g, "conv0", {"x", "w", "b0"}, "c0", 1);
  AddNode(g, "Relu", "relu0", {"c0"}, {"r"});
  AddPaddedConv(g, "conv1", {"r", tied ? "w" : "w2", "b1"}, "y", 1);
  SetFloatType(g->add_output(), "y", {1, kC, kH, kH});
  return m;
}

// Runs TiedConvModel(tied) on sin values and compares with float64 loops.
void ExpectTiedConvOutput(Session& s, bool tied = true) {
  Tensor x = Tensor::Host(DataType::kFloat, {1, kC, kH, kH});
  std::vector<double> xd(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) xd[i] = x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i));
  auto out = s.Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  ASSERT_EQ(y.dims(), (Dims{1, kC, kH, kH}));
  const auto w = InitializerValues(kC * kC * 9, 0.02f, 0.001f);
  int64_t h = 0;
  auto r = Conv2d(xd, 1, kC, kH, w, InitializerValues(kC, 0.01f, 0.02f), kC, 3, 1, 1, &h);
  Relu(r);
  const auto w2 = tied ? w : InitializerValues(kC * kC * 9, 0.02f, 0.001f + kW2Offset);
  const auto ref = Conv2d(r, 1, kC, h, w2, InitializerValues(kC, 0.03f), kC, 3, 1, 1, &h);
  double largest = 0;
  for (double v : ref) largest = std::max(largest, std::abs(v));
  ASSERT_GT(largest, 0.05);
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(y.data<float>()[i], ref[i], 1e-5 * largest) << "at " << i;
}

TEST(PackedWeights, ConvolutionsReadingOneInitializerShareOneCopy) {
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    const int64_t packed0 = cpu::ConstantWeightsPacked(), shared0 = cpu::ConstantWeightsShared();
    auto s = LoadTestModel(TiedConvModel(), fusion);
    ASSERT_NE(s, nullptr);
    for (int call = 0; call < 2; ++call) ExpectTiedConvOutput(*s);
    const int64_t packed = cpu::ConstantWeightsPacked() - packed0, shared = cpu::ConstantWeightsShared() - shared0;
    // oneDNN's jit and brgemm convolutions read blocked weights: one copy, read by both.
    EXPECT_EQ(packed, 1);
    EXPECT_EQ(shared, 1);
  }
}

TEST(PackedWeights, ConvolutionsReadingTwoInitializersOfOneShapeDoNotShare) {
  const int64_t packed0 = cpu::ConstantWeightsPacked(), shared0 = cpu::ConstantWeightsShared();
  auto s = LoadTestModel(TiedConvModel(/*tied=*/false), /*fusion=*/true);
  ASSERT_NE(s, nullptr);
  for (int call = 0; call < 2; ++call) ExpectTiedConvOutput(*s, /*tied=*/false);
  EXPECT_EQ(cpu::ConstantWeightsPacked() - packed0, 2);
  EXPECT_EQ(cpu::ConstantWeightsShared() - shared0, 0);
}

TEST(PackedWeights, SessionsOfOneGraphShareAndOutliveEachOther) {
  const Graph g = ImportTestModel(TiedConvModel());
  auto first = CpuSession(g), second = CpuSession(g);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const int64_t packed0 = cpu::ConstantWeightsPacked(), shared0 = cpu::ConstantWeightsShared();
  ExpectTiedConvOutput(*first);
  ExpectTiedConvOutput(*second);
  // The graph's initializer is one buffer: the second session's convolutions take the copy
  // the first one made.
  EXPECT_EQ(cpu::ConstantWeightsPacked() - packed0, 1);
  EXPECT_EQ(cpu::ConstantWeightsShared() - shared0, 3);
  first.reset();
  ExpectTiedConvOutput(*second);
  second.reset();
  // Once both are gone the copy is too: a new session packs again.
  auto third = CpuSession(g);
  ASSERT_NE(third, nullptr);
  ExpectTiedConvOutput(*third);
  EXPECT_EQ(cpu::ConstantWeightsPacked() - packed0, 2);
}

// y = x1 B + x2 B: two `op` nodes (Gemm or MatMul) reading one initializer B [288, 160].
std::unique_ptr<Session> TiedProductSession(const std::string& op, const std::vector<float>& w) {
  Graph g;
  g.name = "tied_" + op;
  g.opsets[""] = 13;
  g.inputs = {ValueInfo{"x1", DataType::kFloat, Shape::Unknown()}, ValueInfo{"x2", DataType::kFloat, Shape::Unknown()}};
  g.initializers = {{"w", Tensor::FromVector<float>(w, {kK, kN})}};
  for (int i : {1, 2}) {
    Node product;
    product.name = op + std::to_string(i);
    product.op_type = op;
    product.inputs = {"x" + std::to_string(i), "w"};
    product.outputs = {"p" + std::to_string(i)};
    g.nodes.push_back(product);
  }
  Node add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {"p1", "p2"};
  add.outputs = {"y"};
  g.nodes.push_back(add);
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Unknown()});
  return CpuSession(g);
}

// Runs it on m rows and compares with float64 sums.
void ExpectTiedProduct(Session& s, const std::vector<float>& w, int64_t m) {
  const std::vector<float> x1 = RandomFloats(m * kK, 4), x2 = RandomFloats(m * kK, 5);
  auto y = s.Run({{"x1", Tensor::FromVector<float>(x1, {m, kK})}, {"x2", Tensor::FromVector<float>(x2, {m, kK})}});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> want1, scale1, want2, scale2;
  GemmReference(x1, w, false, nullptr, m, kK, kN, 1.0, 1.0, &want1, &scale1);
  GemmReference(x2, w, false, nullptr, m, kK, kN, 1.0, 1.0, &want2, &scale2);
  for (size_t i = 0; i < want1.size(); ++i) {
    want1[i] += want2[i];
    scale1[i] += scale2[i];
  }
  ExpectClose((*y)[0].data<float>(), want1, scale1, "x1 w + x2 w, rows " + std::to_string(m));
}

TEST(PackedWeights, GemmsReadingOneInitializerShareOneCopy) {
  constexpr int64_t kRows = 64;  // oneDNN's matmul (packed_matmul_weights.h)
  ASSERT_FALSE(cpu::IsSmallGemm(kRows, kK, kN) || cpu::skinny::IsSkinny(kRows, kK, kN));
  const std::vector<float> w = RandomFloats(kK * kN, 3);
  auto s = TiedProductSession("Gemm", w);
  ASSERT_NE(s, nullptr);
  const int64_t packed0 = cpu::MatMulWeightsPacked(), shared0 = cpu::ConstantWeightsShared();
  ExpectTiedProduct(*s, w, kRows);
  if (cpu::Avx512Allowed()) {  // oneDNN's brgemm kernels read B blocked: packed once, read twice
    EXPECT_EQ(cpu::MatMulWeightsPacked() - packed0, 1);
    EXPECT_EQ(cpu::ConstantWeightsShared() - shared0, 1);
  }
}

TEST(PackedWeights, SkinnyProductsReadingOneInitializerShareOneCopy) {
  constexpr int64_t kRows = 2;  // the skinny path's panels (skinny_gemm.h), on every CPU
  ASSERT_TRUE(cpu::skinny::IsSkinny(kRows, kK, kN) && !cpu::IsSmallGemm(kRows, kK, kN));
  const std::vector<float> w = RandomFloats(kK * kN, 6);
  auto s = TiedProductSession("MatMul", w);
  ASSERT_NE(s, nullptr);
  const int64_t packed0 = cpu::ConstantWeightsPacked(), shared0 = cpu::ConstantWeightsShared();
  for (int call = 0; call < 2; ++call) ExpectTiedProduct(*s, w, kRows);
  EXPECT_EQ(cpu::ConstantWeightsPacked() - packed0, 1);
  EXPECT_EQ(cpu::ConstantWeightsShared() - shared0, 1);
}

}  // namespace
}  // namespace tandem
