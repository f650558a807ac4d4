// Element conversions with defined results. C++ leaves a floating-point value converted to
// an integer type undefined when it is NaN or out of that type's range (and sanitizers
// report it); model content can produce such values anywhere (Cast, Pow, indices read from
// float tensors). Here NaN converts to 0 and out-of-range values saturate to the
// integer's min/max — the same rule as Rust's `as` and XLA's float-to-int conversion.
// Every other conversion is a plain static_cast.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

namespace tandem {

template <typename To, typename From>
To NumericCast(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To> && !std::is_same_v<To, bool>) {
    if (std::isnan(v)) return To(0);
    // min() is a power of two (or 0), exact in any float type; max() + 1 is too.
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi_excl = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * From(2);
    if (v <= lo) return std::numeric_limits<To>::min();
    if (v >= hi_excl) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace tandem
