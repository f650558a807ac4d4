// Constant weights of oneDNN's matrix products packed once in the layout oneDNN picks
// (providers/cpu/kernels/math/packed_matmul_weights.h): Gemm (B and B^T, a bias row, alpha and
// beta) and FusedMatMul (3-D A, a bias, Relu) with more rows than the small and skinny
// paths take, against float64 sums; a second run and a second batch size reuse the packed
// copy, and weights that are a graph input are never packed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/cpu_isa.h"
#include "providers/cpu/kernels/math/packed_matmul_weights.h"
#include "providers/cpu/microkernels/skinny_gemm.h"
#include "providers/cpu/microkernels/small_gemm.h"
#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

constexpr int64_t kK = 288, kN = 160;

TEST(PackedMatMulWeights, GemmWithConstantWeights) {
  for (int64_t m : {40, 64}) ASSERT_FALSE(cpu::IsSmallGemm(m, kK, kN) || cpu::skinny::IsSkinny(m, kK, kN));
  const std::vector<float> c = RandomFloats(kN, 2);
  for (bool trans_b : {false, true}) {
    const std::vector<float> w = RandomFloats(kK * kN, trans_b ? 3 : 4);
    Node gemm;
    gemm.name = "gemm";
    gemm.op_type = "Gemm";
    gemm.inputs = {"x", "w", "c"};
    gemm.outputs = {"y"};
    gemm.attributes["transB"] = IntAttribute(trans_b);
    gemm.attributes["alpha"] = FloatAttribute(trans_b ? 1.f : 0.5f);  // 0.5, 2: C as a sum, not a bias
    gemm.attributes["beta"] = FloatAttribute(trans_b ? 1.f : 2.f);
    auto s = OneNodeCpuSession(gemm, {ValueInfo{"x", DataType::kFloat, Shape::Unknown()}},
                            {{"w", Tensor::FromVector<float>(w, trans_b ? Dims{kN, kK} : Dims{kK, kN})},
                             {"c", Tensor::FromVector<float>(c, {kN})}});
    ASSERT_NE(s, nullptr);
    const int64_t before = cpu::MatMulWeightsPacked();
    for (int64_t m : {64, 64, 40}) {  // a second run, then another batch size
      const std::vector<float> x = RandomFloats(m * kK, 10 + m);
      auto y = s->Run({{"x", Tensor::FromVector<float>(x, {m, kK})}});
      ASSERT_TRUE(y.ok()) << y.status();
      std::vector<double> want, scale;
      GemmReference(x, w, trans_b, c.data(), m, kK, kN, trans_b ? 1.0 : 0.5, trans_b ? 1.0 : 2.0, &want, &scale);
      ExpectClose((*y)[0].data<float>(), want, scale, (trans_b ? "B^T m=" : "B m=") + std::to_string(m));
    }
    // One copy per layout oneDNN picks (none where it reads B as stored; the two batch
    // sizes may pick two).
    const int64_t packed = cpu::MatMulWeightsPacked() - before;
    EXPECT_LE(packed, 2) << "packed again on a repeated shape";
    if (cpu::Avx512Allowed()) {
      EXPECT_GE(packed, 1) << "oneDNN's brgemm kernels read B blocked: packed";
    }
  }
}

TEST(PackedMatMulWeights, FusedMatMulWithBatchDims) {
  const std::vector<float> w = RandomFloats(kK * kN, 5), bias = RandomFloats(kN, 6);
  auto s = OneNodeCpuSession(FusedMatMulReluNode(), {ValueInfo{"x", DataType::kFloat, Shape::Unknown()}},
                          {{"w", Tensor::FromVector<float>(w, {kK, kN})}, {"b", Tensor::FromVector<float>(bias, {kN})}});
  ASSERT_NE(s, nullptr);
  const std::vector<float> x = RandomFloats(3 * 20 * kK, 7);
  const int64_t before = cpu::MatMulWeightsPacked();
  for (int run = 0; run < 2; ++run) {
    auto y = s->Run({{"x", Tensor::FromVector<float>(x, {3, 20, kK})}});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ((*y)[0].dims(), (Dims{3, 20, kN}));
    std::vector<double> want, scale;
    GemmReference(x, w, false, bias.data(), 60, kK, kN, 1.0, 1.0, &want, &scale);
    for (double& v : want) v = std::max(v, 0.0);
    ExpectClose((*y)[0].data<float>(), want, scale, "run " + std::to_string(run));
  }
  EXPECT_LE(cpu::MatMulWeightsPacked() - before, 1) << "packed again on the second run";
  if (cpu::Avx512Allowed()) {
    EXPECT_EQ(cpu::MatMulWeightsPacked() - before, 1) << "oneDNN's brgemm layout, packed once";
  }
}

TEST(PackedMatMulWeights, WeightsFromAGraphInputAreNotPacked) {
  Node mm;
  mm.name = "mm";
  mm.op_type = "MatMul";
  mm.inputs = {"x", "w"};
  mm.outputs = {"y"};
  auto s = OneNodeCpuSession(mm, {ValueInfo{"x", DataType::kFloat, Shape::Unknown()},
                               ValueInfo{"w", DataType::kFloat, Shape::Unknown()}}, {});
  ASSERT_NE(s, nullptr);
  const int64_t before = cpu::MatMulWeightsPacked();
  for (uint32_t seed : {8u, 9u}) {  // new weights each run: a packed copy would be stale
    const std::vector<float> x = RandomFloats(64 * kK, 1), w = RandomFloats(kK * kN, seed);
    auto y = s->Run({{"x", Tensor::FromVector<float>(x, {64, kK})}, {"w", Tensor::FromVector<float>(w, {kK, kN})}});
    ASSERT_TRUE(y.ok()) << y.status();
    std::vector<double> want, scale;
    GemmReference(x, w, false, nullptr, 64, kK, kN, 1.0, 1.0, &want, &scale);
    ExpectClose((*y)[0].data<float>(), want, scale, "seed " + std::to_string(seed));
  }
  EXPECT_EQ(cpu::MatMulWeightsPacked(), before);
}

}  // namespace
}  // namespace tandem
