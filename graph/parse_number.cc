#include "graph/parse_number.h"

#include <charconv>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace tandem {

namespace {

std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 40;
  std::string shown(text.substr(0, kShown));
  for (char& c : shown)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return "'" + shown + (text.size() > kShown ? "...'" : "'");
}

// An optional leading '+' is accepted, as strtol does; from_chars takes only '-'.
std::string_view WithoutPlus(std::string_view text) {
  return text.size() > 1 && text[0] == '+' && text[1] != '-' ? text.substr(1) : text;
}

}  // namespace

absl::StatusOr<int64_t> ParseInt64(std::string_view text, int64_t min, int64_t max) {
  const std::string_view digits = WithoutPlus(text);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, 10);
  if (digits.empty() || end != digits.data() + digits.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range))
    return absl::InvalidArgumentError(Quoted(text) + " is not an integer");
  if (ec == std::errc::result_out_of_range)
    return absl::OutOfRangeError(digits[0] == '-' ? absl::StrCat(Quoted(text), " is below ", min)
                                                  : absl::StrCat(Quoted(text), " is above ", max));
  if (v < min) return absl::OutOfRangeError(absl::StrCat(Quoted(text), " is below ", min));
  if (v > max) return absl::OutOfRangeError(absl::StrCat(Quoted(text), " is above ", max));
  return v;
}

absl::StatusOr<double> ParseFiniteDouble(std::string_view text, const DoubleRange& range) {
  const std::string_view number = WithoutPlus(text);
  double v = 0;
  const auto [end, ec] =
      std::from_chars(number.data(), number.data() + number.size(), v, std::chars_format::general);
  if (number.empty() || end != number.data() + number.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range))
    return absl::InvalidArgumentError(Quoted(text) + " is not a number");
  if (ec == std::errc::result_out_of_range)  // beyond double's range, either way
    return absl::OutOfRangeError(Quoted(text) + " is beyond the range of a double");
  if (!std::isfinite(v)) return absl::InvalidArgumentError(Quoted(text) + " is not a finite number");
  if (v < range.min || (range.min_exclusive && v == range.min))
    return absl::OutOfRangeError(
        absl::StrCat(Quoted(text), " is ", range.min_exclusive ? "not above " : "below ", range.min));
  if (v > range.max || (range.max_exclusive && v == range.max))
    return absl::OutOfRangeError(
        absl::StrCat(Quoted(text), " is ", range.max_exclusive ? "not below " : "above ", range.max));
  return v;
}

}  // namespace tandem
