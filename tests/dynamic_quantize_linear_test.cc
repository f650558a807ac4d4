// DynamicQuantizeLinear (providers/cpu/kernels/quantization/quantize_linear_ops.cc, its loops
// in microkernels/quantize_u8.h: ctest's skinny_gemm_avx2 / _sse41 run their narrower builds) bit for
// bit against the ONNX definition written here with libm: y_scale = (max(0, max x) -
// min(0, min x)) / 255, y_zero_point = round(saturate(-min / y_scale)), y = saturate(round(x /
// y_scale) + y_zero_point), rounding half to even; on values that land exactly half-way,
// random values of several ranges and lengths (vector tails, the threads' blocks), all
// positive, all negative, all zero, and a NaN (quantized to 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

struct Quantized {
  std::vector<uint8_t> y;
  float scale;
  uint8_t zero_point;
};

Quantized Reference(const std::vector<float>& x) {
  float mn = 0.f, mx = 0.f;
  for (float v : x)
    if (!std::isnan(v)) mn = std::min(mn, v), mx = std::max(mx, v);
  Quantized q;
  q.scale = (mx - mn) / 255.f;
  const float zp = q.scale == 0.f ? 0.f : std::nearbyint(std::clamp(-mn / q.scale, 0.f, 255.f));
  q.zero_point = static_cast<uint8_t>(zp);
  for (float v : x) {
    const float r = q.scale == 0.f ? 0.f : std::nearbyint(v / q.scale) + zp;
    q.y.push_back(std::isnan(r) ? 0 : static_cast<uint8_t>(std::clamp(r, 0.f, 255.f)));
  }
  return q;
}

TEST(DynamicQuantizeLinear, MatchesTheDefinitionBitForBit) {
  std::vector<std::vector<float>> inputs;
  // min -100, max 155: scale exactly 1, so k + 0.5 lands half-way (to even: 2, 4, -0, -2, ...).
  inputs.push_back({-100.f, 155.f, 2.5f, 3.5f, -0.5f, -1.5f, 0.5f, 1.5f, 254.5f, -99.5f, 7.f});
  std::mt19937 rng(7);
  for (int64_t n : {1, 15, 17, 1000, 70001}) {
    for (float lo : {-3.f, 0.5f, -40.f}) {
      std::uniform_real_distribution<float> u(lo, lo + (lo < 0 ? 2.f * -lo + 1.f : 9.f));
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = u(rng);
      inputs.push_back(x);
    }
  }
  inputs.push_back(std::vector<float>(33, -2.f));  // all negative: zero point 255
  inputs.push_back(std::vector<float>(9, 0.f));    // scale 0
  inputs.push_back({1.f, std::numeric_limits<float>::quiet_NaN(), -3.f, 0.25f});
  Node node;
  node.name = "dql";
  node.op_type = "DynamicQuantizeLinear";
  node.inputs = {"x"};
  node.outputs = {"y", "y_scale", "y_zero_point"};
  Graph g;
  g.name = "dql";
  g.opsets[""] = 13;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Unknown()}};
  g.nodes.push_back(node);
  g.outputs = {ValueInfo{"y", DataType::kUint8, Shape::Unknown()}, ValueInfo{"y_scale", DataType::kFloat, Shape::Unknown()},
               ValueInfo{"y_zero_point", DataType::kUint8, Shape::Unknown()}};
  auto s = CpuSession(g);
  ASSERT_NE(s, nullptr);
  for (const std::vector<float>& x : inputs) {
    SCOPED_TRACE("n = " + std::to_string(x.size()) + ", x[0] = " + std::to_string(x[0]));
    auto out = s->Run({{"x", Tensor::FromVector<float>(x, {static_cast<int64_t>(x.size())})}});
    ASSERT_TRUE(out.ok()) << out.status();
    const Quantized want = Reference(x);
    EXPECT_EQ((*out)[1].data<float>()[0], want.scale);
    EXPECT_EQ((*out)[2].data<uint8_t>()[0], want.zero_point);
    const uint8_t* got = (*out)[0].data<uint8_t>();
    for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(got[i], want.y[i]) << "x[" << i << "] = " << x[i];
  }
}

}  // namespace
}  // namespace tandem
