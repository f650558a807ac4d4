// The one parser of numbers that come from a file or a flag (a CLI value, a checkpoint's
// metadata, external data's offset, a .npy header, a CSV cell): the whole text or an
// error, range-checked, finite for floats. The error says what was wrong with the text
// ("'0x18' is not an integer", "'-3' is below 0", "'nan' is not a finite number"); callers
// prefix it with the file, field or flag it came from.
#pragma once
#include <cstdint>
#include <limits>
#include <string_view>

#include "absl/status/statusor.h"

namespace tandem {

// A base-10 integer, an optional sign and digits only (no spaces, no "0x", no "1e3"), in
// [min, max].
absl::StatusOr<int64_t> ParseInt64(std::string_view text, int64_t min = std::numeric_limits<int64_t>::min(),
                                   int64_t max = std::numeric_limits<int64_t>::max());

// A decimal or scientific number ("0.5", "-1e-3"; no spaces, no hex floats), finite, in
// [min, max]; with `min_exclusive` / `max_exclusive` the bound itself is refused too.
struct DoubleRange {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
  bool min_exclusive = false;
  bool max_exclusive = false;
};
absl::StatusOr<double> ParseFiniteDouble(std::string_view text, const DoubleRange& range = {});

}  // namespace tandem
