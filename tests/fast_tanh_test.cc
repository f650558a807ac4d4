// The vectorizable float tanh (providers/cpu/microkernels/fast_tanh.h) against float64 tanh:
// at most 3 ulp over every float in [-12, 12] sampled densely, both polynomial and exp
// branches and their seam, and the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "providers/cpu/microkernels/fast_tanh.h"

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
  std::vector<float> y(x.size());
  TanhInto(x.data(), y.data(), static_cast<int64_t>(x.size()));
  double worst = 0;
  float worst_at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double u = Ulps(y[i], std::tanh(static_cast<double>(x[i])));
    if (u > worst) worst = u, worst_at = x[i];
  }
  EXPECT_LE(worst, 3.0) << "at x = " << worst_at;
}

TEST(FastTanh, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.f, -0.f, inf, -inf, std::nanf(""), 100.f, -100.f};
  std::vector<float> y(x.size());
  TanhInto(x.data(), y.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(y[0], 0.f);
  EXPECT_TRUE(std::signbit(y[1]));
  EXPECT_EQ(y[2], 1.f);
  EXPECT_EQ(y[3], -1.f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], 1.f);
  EXPECT_EQ(y[6], -1.f);
}

}  // namespace
}  // namespace tandem::cpu
