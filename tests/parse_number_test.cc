// graph/parse_number.h: every number from a file or a flag is read whole, in range and
// finite, or refused saying what is wrong; the issue 71 cases among them (an external-data
// offset of "0x18", a checkpoint epoch of INT64_MAX + 1, a --val-split of "nan").
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "graph/parse_number.h"

namespace tandem {
namespace {

std::string Error(const absl::Status& s) { return std::string(s.message()); }

TEST(ParseNumber, IntegersAreReadWhole) {
  EXPECT_EQ(*ParseInt64("0"), 0);
  EXPECT_EQ(*ParseInt64("-42"), -42);
  EXPECT_EQ(*ParseInt64("+7"), 7);
  EXPECT_EQ(*ParseInt64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(*ParseInt64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  for (const char* bad : {"", " 5", "5 ", "0x18", "12abc", "1e3", "1.0", "+", "-", "+-1", "--1", "5\n"}) {
    auto v = ParseInt64(bad);
    EXPECT_FALSE(v.ok()) << "'" << bad << "' read as " << *v;
    if (!v.ok()) {
      EXPECT_NE(Error(v.status()).find("is not an integer"), std::string::npos) << Error(v.status());
    }
  }
  EXPECT_EQ(Error(ParseInt64("0x18").status()), "'0x18' is not an integer");
}

TEST(ParseNumber, IntegersAreRangeChecked) {
  EXPECT_EQ(Error(ParseInt64("0", 1).status()), "'0' is below 1");
  EXPECT_EQ(Error(ParseInt64("11", 0, 10).status()), "'11' is above 10");
  EXPECT_EQ(Error(ParseInt64("9223372036854775808").status()), "'9223372036854775808' is above 9223372036854775807");
  EXPECT_EQ(Error(ParseInt64("-9223372036854775809", 0).status()), "'-9223372036854775809' is below 0");
  EXPECT_EQ(Error(ParseInt64("-1000000000000", 0).status()), "'-1000000000000' is below 0");
  EXPECT_EQ(*ParseInt64("10", 0, 10), 10);
}

TEST(ParseNumber, FloatsAreReadWholeAndFinite) {
  EXPECT_EQ(*ParseFiniteDouble("0.5"), 0.5);
  EXPECT_EQ(*ParseFiniteDouble("-1e-3"), -1e-3);
  EXPECT_EQ(*ParseFiniteDouble("+2"), 2.0);
  EXPECT_EQ(*ParseFiniteDouble("3."), 3.0);
  for (const char* bad : {"", " 1", "1 ", "0x1p3", "1,5", "abc", "1e", "--1"})
    EXPECT_FALSE(ParseFiniteDouble(bad).ok()) << bad;
  for (const char* not_finite : {"nan", "NaN", "inf", "-inf", "infinity"})
    EXPECT_EQ(Error(ParseFiniteDouble(not_finite).status()), std::string("'") + not_finite + "' is not a finite number");
  EXPECT_FALSE(ParseFiniteDouble("1e999").ok());
}

TEST(ParseNumber, FloatRangesOpenOrClosed) {
  const DoubleRange split{0, 1, false, true};  // [0, 1)
  EXPECT_EQ(*ParseFiniteDouble("0", split), 0.0);
  EXPECT_EQ(Error(ParseFiniteDouble("1", split).status()), "'1' is not below 1");
  EXPECT_EQ(Error(ParseFiniteDouble("-0.1", split).status()), "'-0.1' is below 0");
  const DoubleRange positive{0, 1e9, true, false};  // (0, 1e9]
  EXPECT_EQ(Error(ParseFiniteDouble("0", positive).status()), "'0' is not above 0");
  EXPECT_EQ(*ParseFiniteDouble("1e9", positive), 1e9);
}

TEST(ParseNumber, ErrorsShowAShortPrintableText) {
  const std::string long_text(100, '7');
  EXPECT_EQ(Error(ParseInt64(long_text + "x").status()), "'" + std::string(40, '7') + "...' is not an integer");
  EXPECT_EQ(Error(ParseInt64(std::string("1\0" "2", 3)).status()), "'1?2' is not an integer");
}

}  // namespace
}  // namespace tandem
