// The Swish pass that follows the CPU's convolutions (providers/cpu/microkernels/swish.h), in
// each build this CPU can run (ctest's cpu_activation_fusion_avx2 / _sse41 cap them), against
// float64 x * sigmoid(alpha x): lengths below, at and past a vector with tails, arguments to
// +-100 (exp's clamps), alpha 1 and 1.7, NaN, infinities and +-1e30; the variant that also sums
// each column of rows x B values (B dividing the register or not, plain planes of B = 1) and
// the parallel channel means over a blocked map [outer, S, B], against float64 sums. The
// convolutions that use it are checked against float64 in cpu_activation_fusion_test.cc (SiLU
// after a Conv) and cpu_squeeze_excitation_test.cc (the pool taken on the way).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "providers/cpu/microkernels/swish.h"

namespace tandem {
namespace {

double SwishRef(double x, double alpha) { return x / (1.0 + std::exp(-alpha * x)); }

TEST(CpuSwish, EachBuildMatchesFloat64) {
  for (const cpu::swish::Kernels* k : cpu::swish::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    for (const float alpha : {1.f, 1.7f}) {
      for (const int64_t n : {int64_t{3}, int64_t{16}, int64_t{37}, int64_t{1001}}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) x[i] = 100.f * std::sin(0.61f * static_cast<float>(i)) * (i % 3 ? 0.05f : 1.f);
        std::vector<float> y = x;
        k->run(y.data(), n, alpha);
        for (int64_t i = 0; i < n; ++i) {
          const double want = SwishRef(x[i], alpha);
          // A few ulp of the result, plus what rounding alpha x to float moves exp by (its
          // size * 2^-24 of itself; none for alpha 1); where the result underflows (alpha x
          // below -87.3: |result| < 1e-36) within 1e-35 of it.
          const double rounding = alpha == 1.f ? 0.0 : std::fabs(alpha * x[i]) * 1.2e-7;
          EXPECT_NEAR(y[i], want, std::max((4e-7 + rounding) * std::fabs(want), 1e-35)) << "x = " << x[i] << ", n " << n;
        }
      }
    }
    // exp(-alpha x) would overflow for very negative x: the result must still go to 0.
    const float inf = std::numeric_limits<float>::infinity();
    float special[] = {std::numeric_limits<float>::quiet_NaN(), inf, 0.f, -0.f, -1e30f, -inf, 1e30f};
    k->run(special, 7, 1.f);
    EXPECT_TRUE(std::isnan(special[0]));
    EXPECT_EQ(special[1], inf);
    EXPECT_EQ(special[2], 0.f);
    EXPECT_EQ(special[3], 0.f);
    EXPECT_EQ(special[4], 0.f);
    EXPECT_TRUE(std::isnan(special[5])) << "-inf * sigmoid(-inf) = -inf * 0";
    EXPECT_EQ(special[6], 1e30f);
  }
}

// The parallel entry point covers every value once, with the widest build.
TEST(CpuSwish, InPlaceOverManyBlocksMatchesFloat64) {
  const int64_t n = (int64_t{1} << 17) + 5;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = 8.f * std::sin(0.013f * static_cast<float>(i));
  std::vector<float> y = x;
  cpu::swish::SwishInPlace(y.data(), n, 1.f);
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], SwishRef(x[i], 1.0), 4e-7 * 8.0) << i;
}

std::vector<float> Map(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = 6.f * std::sin(0.37f * static_cast<float>(i)) + 0.5f;
  return x;
}

TEST(CpuSwish, EachBuildSumsItsColumnsAsFloat64) {
  for (const cpu::swish::Kernels* k : cpu::swish::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    for (const int64_t B : {int64_t{1}, int64_t{8}, int64_t{16}, int64_t{24}, int64_t{96}}) {
      for (const int64_t rows : {int64_t{1}, int64_t{3}, int64_t{50}}) {
        const std::vector<float> x = Map(rows * B);
        std::vector<float> y = x, sums(static_cast<size_t>(B), 1.f);  // added to, not overwritten
        k->run_adding_columns(y.data(), rows, B, 1.f, sums.data());
        for (int64_t c = 0; c < B; ++c) {
          double want = 1.0, scale = 1.0;
          for (int64_t r = 0; r < rows; ++r) {
            const double v = SwishRef(x[r * B + c], 1.0);
            ASSERT_NEAR(y[r * B + c], v, 4e-7 * std::max(std::fabs(v), 1e-3)) << "B " << B << " row " << r;
            want += v;
            scale += std::fabs(v);
          }
          EXPECT_NEAR(sums[c], want, (rows * 6e-8 + 1e-6) * scale) << "B " << B << ", rows " << rows << ", column " << c;
        }
      }
    }
  }
}

// The means over S pixels of each block's columns, with the pixels of one block split between
// threads (outer 1) and without (outer 6), B = 1, 16 and 96; the map holds the Swish results.
TEST(CpuSwish, InPlaceWithMeansMatchesFloat64) {
  struct Shape { int64_t outer, S, B; };
  for (const Shape sh : {Shape{1, 3136, 96}, Shape{6, 784, 16}, Shape{4, 5000, 1}, Shape{1, 49, 16}}) {
    const std::vector<float> x = Map(sh.outer * sh.S * sh.B);
    std::vector<float> y = x, means(static_cast<size_t>(sh.outer * sh.B));
    cpu::swish::SwishInPlaceWithMeans(y.data(), sh.outer, sh.S, sh.B, 1.f, means.data(), 2);
    for (int64_t o = 0; o < sh.outer; ++o)
      for (int64_t c = 0; c < sh.B; ++c) {
        double sum = 0.0, scale = 0.0;
        for (int64_t s = 0; s < sh.S; ++s) {
          const size_t i = static_cast<size_t>((o * sh.S + s) * sh.B + c);
          const double v = SwishRef(x[i], 1.0);
          ASSERT_NEAR(y[i], v, 4e-7 * std::max(std::fabs(v), 1e-3));
          sum += v;
          scale += std::fabs(v);
        }
        // A float sum of S values: within (S - 1) 2^-24 of the sum of their magnitudes.
        EXPECT_NEAR(means[o * sh.B + c], sum / sh.S, (sh.S * 6e-8 + 1e-6) * scale / sh.S)
            << "outer " << sh.outer << ", S " << sh.S << ", B " << sh.B << ", block " << o << ", column " << c;
      }
  }
}

}  // namespace
}  // namespace tandem
