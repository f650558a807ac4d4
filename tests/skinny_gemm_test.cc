// The skinny products (providers/cpu/microkernels/skinny_gemm.h): every instruction-set build
// this CPU can run, called directly, against float64 sums; and a Gemm node of a few rows
// with constant weights, which takes that path, against the same reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "providers/cpu/cpu_isa.h"
#include "providers/cpu/microkernels/skinny_gemm.h"
#include "runtime/session.h"
#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

TEST(SkinnyGemm, IsaCapDecidesTheBuilds) {
  EXPECT_TRUE(cpu::CapAdmitsAvx512(""));
  EXPECT_TRUE(cpu::CapAdmitsAvx512("ALL"));
  EXPECT_TRUE(cpu::CapAdmitsAvx512("avx512_core"));
  EXPECT_TRUE(cpu::CapAdmitsAvx512("AVX512_CORE_AMX"));
  EXPECT_TRUE(cpu::CapAdmitsAvx512("AVX10_1_512"));
  EXPECT_FALSE(cpu::CapAdmitsAvx512("AVX2"));
  EXPECT_FALSE(cpu::CapAdmitsAvx512("avx2_vnni"));
  EXPECT_FALSE(cpu::CapAdmitsAvx512("SSE41"));
  // This process's own cap (the ISA ctest entries set it) leaves only what it admits.
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap && *cap) {
    for (const cpu::skinny::Kernels* k : cpu::skinny::Builds().runnable()) {
      if (!cpu::CapAdmitsAvx512(cap)) {
        EXPECT_STRNE(k->isa, "avx512");
      }
      if (!cpu::CapAdmitsAvx2(cap)) {
        EXPECT_STREQ(k->isa, "baseline");
      }
    }
  }
  EXPECT_EQ(&cpu::skinny::Builds().best(), cpu::skinny::Builds().runnable().back());
}

// Every build, 1-6 rows, both layouts of B, n not a multiple of any panel width, with and
// without a bias, on 1 and 2 threads, twice each (both orders of the panels).
TEST(SkinnyGemm, EveryBuildMatchesFloat64) {
  const int64_t k = 300, n = 203;
  const std::vector<float> b = RandomFloats(k * n, 1), bias = RandomFloats(n, 2);
  for (const cpu::skinny::Kernels* kernels : cpu::skinny::Builds().runnable())
    for (bool trans_b : {false, true}) {
      const cpu::skinny::PackedWeights packed(b.data(), trans_b, k, n, *kernels);
      for (int m = 1; m <= cpu::skinny::kMaxRows + 2; ++m) {  // 5, 6: in blocks of kMaxRows
        const std::vector<float> a = RandomFloats(m * k, 10 + m);
        for (bool with_bias : {false, true})
          for (int threads : {1, 2}) {
            const float alpha = with_bias ? 0.5f : 1.f, beta = 2.f;
            std::vector<double> want, scale;
            GemmReference(a, b, trans_b, with_bias ? bias.data() : nullptr, m, k, n, alpha, beta, &want, &scale);
            for (int call = 0; call < 2; ++call) {  // consecutive calls walk the panels in opposite orders
              std::vector<float> y(m * n, -7.f);
              packed.Multiply(a.data(), m, alpha, with_bias ? bias.data() : nullptr, beta, y.data(), threads);
              ExpectClose(y.data(), want, scale,
                          std::string(kernels->isa) + (trans_b ? " B^T" : " B") + " m=" + std::to_string(m) +
                              (with_bias ? " bias" : "") + " threads=" + std::to_string(threads) +
                              " call=" + std::to_string(call));
            }
          }
      }
    }
}

// Gemm(A, B constant, C) at batch 1-5: rows <= 4 take the skinny path, 5 oneDNN's; both
// must give the float64 result (with Relu applied: FusedGemm's activation comes after).
TEST(SkinnyGemm, GemmNodeOfFewRowsWithConstantWeights) {
  const int64_t k = 256, n = 300;
  const std::vector<float> w = RandomFloats(n * k, 3), c = RandomFloats(n, 4);
  for (int64_t m : {1, 3, 5}) {
    ASSERT_EQ(cpu::skinny::IsSkinny(m, k, n), m <= 4);
    Graph g;
    g.name = "gemm";
    g.opsets[""] = 13;
    g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of({m, k})});
    g.initializers["w"] = Tensor::FromVector<float>(w, {n, k});
    g.initializers["c"] = Tensor::FromVector<float>(c, {n});
    Node gemm;
    gemm.name = "gemm";
    gemm.op_type = "Gemm";
    gemm.inputs = {"x", "w", "c"};
    gemm.outputs = {"y"};
    gemm.attributes["transB"] = IntAttribute(1);
    g.nodes.push_back(gemm);
    g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Of({m, n})});
    SessionOptions o;
    o.providers = {"cpu"};
    o.num_threads = 2;
    auto s = Session::FromGraph(g, o);
    ASSERT_TRUE(s.ok()) << s.status();
    const std::vector<float> x = RandomFloats(m * k, 20 + m);
    for (int run = 0; run < 2; ++run) {  // the second run reuses the packed weights
      const int64_t before = cpu::skinny::ProductsRun();
      auto y = (*s)->Run({{"x", Tensor::FromVector<float>(x, {m, k})}});
      ASSERT_TRUE(y.ok()) << y.status();
      EXPECT_EQ(cpu::skinny::ProductsRun() - before, m <= 4 ? 1 : 0) << "m=" << m << ": the skinny path ran or not";
      std::vector<double> want, scale;
      GemmReference(x, w, true, c.data(), m, k, n, 1.0, 1.0, &want, &scale);
      ExpectClose((*y)[0].data<float>(), want, scale, "m=" + std::to_string(m) + " run " + std::to_string(run));
    }
  }
}

// FusedMatMul(A [2, 1, k], B constant [k, n], bias) with Relu: 2 rows through the skinny
// path, against float64 with the bias and Relu applied after.
TEST(SkinnyGemm, MatMulWithBatchDimsAndConstantWeights) {
  const int64_t k = 200, n = 400;
  const std::vector<float> w = RandomFloats(k * n, 5), bias = RandomFloats(n, 6), x = RandomFloats(2 * k, 7);
  auto s = OneNodeCpuSession(FusedMatMulReluNode(), {ValueInfo{"x", DataType::kFloat, Shape::Of({2, 1, k})}},
                             {{"w", Tensor::FromVector<float>(w, {k, n})}, {"b", Tensor::FromVector<float>(bias, {n})}});
  ASSERT_NE(s, nullptr);
  const int64_t before = cpu::skinny::ProductsRun();
  auto y = s->Run({{"x", Tensor::FromVector<float>(x, {2, 1, k})}});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(cpu::skinny::ProductsRun() - before, 1) << "the skinny path did not run";
  ASSERT_EQ((*y)[0].dims(), (Dims{2, 1, n}));
  std::vector<double> want, scale;
  GemmReference(x, w, false, bias.data(), 2, k, n, 1.0, 1.0, &want, &scale);
  for (double& v : want) v = std::max(v, 0.0);
  ExpectClose((*y)[0].data<float>(), want, scale, "FusedMatMul");
}

}  // namespace
}  // namespace tandem
