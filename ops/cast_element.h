// CastElement<To>(v): the ONNX Cast op's conversion of one element between plain C++
// number types (and bool), shared by the CPU and CUDA kernels so both devices give the
// same results where C++ leaves them undefined: to bool is v != 0; a float to an integer
// truncates through int64, NaN gives 0 and a value out of int64's range gives int64's
// minimum (below) or 0 (above); uint64 takes the values in [2^63, 2^64) directly.
// Not graph/numeric_cast.h's NumericCast, which saturates (the engine's own index and
// size arithmetic): the two rules differ for out-of-range values, so they have different
// names (one name would be one inline function with two definitions, and an unoptimised
// build would give every caller whichever the linker kept; tests/cast_rules/, ctest cast_rules_o0).
#pragma once
#include <cstdint>
#include <type_traits>

#include "ops/host_device.h"

namespace tandem {

template <typename To, typename From>
TANDEM_HD To CastElement(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (v != v) return To(0);  // NaN
    if constexpr (std::is_same_v<To, uint64_t>) {
      if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<To>(v);
    }
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return static_cast<To>(static_cast<int64_t>(v));
    return v < 0 ? static_cast<To>(INT64_MIN) : To(0);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace tandem
