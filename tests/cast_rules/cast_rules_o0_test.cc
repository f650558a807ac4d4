// The two float -> integer rules of Tandem, each instantiated in its own translation unit
// and built without optimisation (-O0), where no inline function is inlined and the linker
// keeps one definition of each name: each caller must get its own rule. When both rules
// were called tandem::NumericCast, this program got one rule for both calls (which one
// depended on the link order).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

int32_t SaturatingToInt32(float v);  // saturating_cast.cc
int32_t CastOpToInt32(float v);      // cast_op_element.cc

namespace {

constexpr int32_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();

TEST(CastRulesAtO0, TheEnginesConversionSaturates) {
  EXPECT_EQ(SaturatingToInt32(3e9f), kMax);
  EXPECT_EQ(SaturatingToInt32(-3e9f), kMin);
  EXPECT_EQ(SaturatingToInt32(1e19f), kMax);
  EXPECT_EQ(SaturatingToInt32(std::nanf("")), 0);
  EXPECT_EQ(SaturatingToInt32(-7.9f), -7);
}

// Cast truncates through int64 and keeps the low 32 bits: 3e9 = 0xB2D05E00 reads as
// 3000000000 - 2^32 = -1294967296; a value beyond int64's range gives int64's minimum
// below (low 32 bits 0) and 0 above.
TEST(CastRulesAtO0, TheCastOpTruncatesThroughInt64) {
  EXPECT_EQ(CastOpToInt32(3e9f), -1294967296);
  EXPECT_EQ(CastOpToInt32(-3e9f), 1294967296);
  EXPECT_EQ(CastOpToInt32(1e19f), 0);
  EXPECT_EQ(CastOpToInt32(-1e19f), 0);
  EXPECT_EQ(CastOpToInt32(std::nanf("")), 0);
  EXPECT_EQ(CastOpToInt32(-7.9f), -7);
}

}  // namespace
