// Gemm's products that run on oneDNN's sgemm (providers/cpu/kernels/math/matmul.cc: large,
// untransposed, B a graph input as in a training step's dX = dY W): no C, C as a row, a
// column or a full matrix, alpha and beta not 1, and an activation (FusedGemm), against
// float64 sums judged at each element's magnitude. Also under ctest's AVX2-capped run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

constexpr int64_t kM = 64, kK = 288, kN = 160;  // 2.9M multiply-adds: past the sgemm threshold

struct Case {
  std::string name;
  Dims c_dims;  // empty: no C
  float alpha, beta;
  bool relu;
};

TEST(GemmSgemmPath, UntransposedProductsWithAChangingB) {
  for (const Case& t : {Case{"no C", {}, 1.f, 1.f, false}, Case{"C row", {kN}, 1.f, 1.f, false},
                        Case{"C column, alpha 0.5, beta 2", {kM, 1}, 0.5f, 2.f, false},
                        Case{"C matrix, beta -1", {kM, kN}, 1.f, -1.f, false},
                        Case{"C row, Relu", {1, kN}, 1.f, 1.f, true}}) {
    SCOPED_TRACE(t.name);
    Node gemm;
    gemm.name = "gemm";
    gemm.op_type = t.relu ? "FusedGemm" : "Gemm";
    if (t.relu) {
      gemm.domain = kTandemDomain;
      gemm.attributes["activation"] = StringAttribute("Relu");
    }
    gemm.inputs = {"a", "b"};
    if (!t.c_dims.empty()) gemm.inputs.push_back("c");
    gemm.outputs = {"y"};
    gemm.attributes["alpha"] = FloatAttribute(t.alpha);
    gemm.attributes["beta"] = FloatAttribute(t.beta);
    std::vector<ValueInfo> inputs = {ValueInfo{"a", DataType::kFloat, Shape::Unknown()},
                                     ValueInfo{"b", DataType::kFloat, Shape::Unknown()}};
    if (!t.c_dims.empty()) inputs.push_back(ValueInfo{"c", DataType::kFloat, Shape::Unknown()});
    auto s = OneNodeCpuSession(gemm, inputs, {});
    ASSERT_NE(s, nullptr);
    const std::vector<float> a = RandomFloats(kM * kK, 1), b = RandomFloats(kK * kN, 2);
    const int64_t c_rows = t.c_dims.size() == 2 ? t.c_dims[0] : 1;
    const int64_t c_cols = t.c_dims.empty() ? 0 : t.c_dims.back();
    const std::vector<float> c = RandomFloats(std::max<int64_t>(c_rows * c_cols, 1), 3);
    std::map<std::string, Tensor> feeds = {{"a", Tensor::FromVector<float>(a, {kM, kK})},
                                           {"b", Tensor::FromVector<float>(b, {kK, kN})}};
    if (!t.c_dims.empty()) feeds["c"] = Tensor::FromVector<float>(c, t.c_dims);
    for (int run = 0; run < 2; ++run) {  // the second run as the first
      auto y = s->Run(feeds);
      ASSERT_TRUE(y.ok()) << y.status();
      const float* got = (*y)[0].data<float>();
      std::vector<double> want, scale;
      GemmReference(a, b, /*trans_b=*/false, nullptr, kM, kK, kN, t.alpha, 0.0, &want, &scale);
      for (int64_t i = 0; i < kM; ++i)
        for (int64_t j = 0; j < kN; ++j) {
          double& w = want[i * kN + j];
          if (!t.c_dims.empty()) {
            const double cv = c[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
            w += t.beta * cv;
            scale[i * kN + j] += std::fabs(t.beta * cv);
          }
          if (t.relu) w = std::max(w, 0.0);
        }
      ExpectClose(got, want, scale, t.name + ", run " + std::to_string(run));
    }
  }
}

}  // namespace
}  // namespace tandem
