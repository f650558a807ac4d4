// The vectorizable float tanh (providers/cpu/microkernels/fast_tanh.h), in every build of
// tanh_arrays.h this CPU runs, against float64 tanh: at most 3 ulp over every float in
// [-12, 12] sampled densely, both polynomial and exp branches and their seam, and the
// special values; GELU's tanh form against its float64 formula.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "providers/cpu/microkernels/tanh_arrays.h"

namespace tandem::cpu {
namespace {

// Distance in float ulps between `got` and the exact `want`, measured at want's magnitude.
double Ulps(float got, double want) {
  const float w = static_cast<float>(want);
  const float next = std::nextafter(std::fabs(w), std::numeric_limits<float>::infinity());
  const double ulp = static_cast<double>(next) - std::fabs(static_cast<double>(w));
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

TEST(FastTanh, WithinThreeUlpOfFloat64) {
  std::vector<float> x;
  for (double v = -12.0; v <= 12.0; v += 1.0 / 4096) x.push_back(static_cast<float>(v));
  for (float v = 1e-30f; v < 1.f; v *= 1.37f) x.insert(x.end(), {v, -v});  // tiny magnitudes
  for (float v : {0.625f, std::nextafter(0.625f, 0.f), 9.f, 8.99f})  // branch seams
    x.insert(x.end(), {v, -v});
  for (const tanh_arrays::Kernels* k : tanh_arrays::Builds().runnable()) {
    std::vector<float> y(x.size());
    k->tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double worst = 0;
    float worst_at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double u = Ulps(y[i], std::tanh(static_cast<double>(x[i])));
      if (u > worst) worst = u, worst_at = x[i];
    }
    EXPECT_LE(worst, 3.0) << k->isa << " build, at x = " << worst_at;
  }
}

// GELU's tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), against float64: the
// error at most a few float32 roundings of the larger of |y| and |x| (for x << 0, y is
// the difference of nearly equal terms and rounds like x does), in place as the kernels run it.
TEST(FastTanh, GeluTanhFormAgainstFloat64) {
  std::vector<float> x;
  for (double v = -12.0; v <= 12.0; v += 1.0 / 512) x.push_back(static_cast<float>(v));
  for (const tanh_arrays::Kernels* k : tanh_arrays::Builds().runnable()) {
    std::vector<float> y = x;
    k->gelu_tanh(y.data(), y.data(), static_cast<int64_t>(y.size()));
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      worst = std::max(worst, std::fabs(y[i] - want) / std::max(std::fabs(want), std::fabs(v)));
    }
    EXPECT_LE(worst, 8 * 6e-8) << k->isa << " build";
  }
}

TEST(FastTanh, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.f, -0.f, inf, -inf, std::nanf(""), 100.f, -100.f};
  for (const tanh_arrays::Kernels* k : tanh_arrays::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    std::vector<float> y(x.size());
    k->tanh(x.data(), y.data(), static_cast<int64_t>(x.size()));
    EXPECT_EQ(y[0], 0.f);
    EXPECT_TRUE(std::signbit(y[1]));
    EXPECT_EQ(y[2], 1.f);
    EXPECT_EQ(y[3], -1.f);
    EXPECT_TRUE(std::isnan(y[4]));
    EXPECT_EQ(y[5], 1.f);
    EXPECT_EQ(y[6], -1.f);
  }
}

}  // namespace
}  // namespace tandem::cpu
