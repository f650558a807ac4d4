#include "graph/low_precision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tandem {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A small float format: exponent/mantissa widths, bias, which codes are special, and its
// finite non-negative values in code order (built once, with the format).
struct Format {
  int ebits, mbits, bias;
  bool has_inf;     // E5M2: exponent all ones is inf (mantissa 0) or NaN
  bool fn_nan;      // E4M3FN: S.1111.111 is NaN
  bool uz;          // FNUZ: 0x80 is the only NaN, no negative zero
  uint8_t nan_code; // what NaN converts to (sign added for FN / IEEE types)
  std::vector<double> magnitudes;
};

int CodeBits(const Format& f) { return 1 + f.ebits + f.mbits; }

// Value of a non-negative code (sign bit clear), NaN/inf per the format.
double Decode(const Format& f, uint32_t code) {
  const uint32_t emax = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
  const uint32_t e = (code >> f.mbits) & emax, m = code & mmask;
  if (f.fn_nan && e == emax && m == mmask) return kNaN;
  if (f.has_inf && e == emax) return m == 0 ? std::numeric_limits<double>::infinity() : kNaN;
  if (e == 0) return std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
  return std::ldexp(1.0 + static_cast<double>(m) / (1u << f.mbits), static_cast<int>(e) - f.bias);
}

Format MakeFormat(int ebits, int mbits, int bias, bool has_inf, bool fn_nan, bool uz, uint8_t nan_code) {
  Format f{ebits, mbits, bias, has_inf, fn_nan, uz, nan_code, {}};
  for (uint32_t c = 0; c < (1u << (CodeBits(f) - 1)); ++c) {
    const double d = Decode(f, c);
    if (!std::isfinite(d)) break;  // specials sit at the top of the code range
    f.magnitudes.push_back(d);
  }
  return f;
}

// Function-local statics: built once, thread-safe, on first use.
const Format* FormatOf(DataType t) {
  static const Format e4m3fn = MakeFormat(4, 3, 7, false, true, false, 0x7F);
  static const Format e4m3fnuz = MakeFormat(4, 3, 8, false, false, true, 0x80);
  static const Format e5m2 = MakeFormat(5, 2, 15, true, false, false, 0x7E);
  static const Format e5m2fnuz = MakeFormat(5, 2, 16, false, false, true, 0x80);
  static const Format e2m1 = MakeFormat(2, 1, 1, false, false, false, 0);
  switch (t) {
    case DataType::kFloat8E4M3FN: return &e4m3fn;
    case DataType::kFloat8E4M3FNUZ: return &e4m3fnuz;
    case DataType::kFloat8E5M2: return &e5m2;
    case DataType::kFloat8E5M2FNUZ: return &e5m2fnuz;
    case DataType::kFloat4E2M1: return &e2m1;
    default: return nullptr;
  }
}

uint8_t EncodeFloat(const Format& f, double v, bool saturate) {
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (CodeBits(f) - 1));
  const bool neg = std::signbit(v);
  if (std::isnan(v)) {
    if (CodeBits(f) == 4) return neg ? 0 : sign_bit;  // ml_dtypes' float4: NaN -> -0, -NaN -> 0
    return f.uz ? f.nan_code : static_cast<uint8_t>(f.nan_code | (neg ? sign_bit : 0));
  }
  const std::vector<double>& mags = f.magnitudes;
  const double a = std::fabs(v), top = mags.back();
  const uint8_t max_code = static_cast<uint8_t>(mags.size() - 1);
  auto overflow = [&]() -> uint8_t {
    if (saturate || CodeBits(f) == 4) return static_cast<uint8_t>(max_code | (neg ? sign_bit : 0));
    if (f.has_inf) return static_cast<uint8_t>((f.nan_code & ~0x3u) | (neg ? sign_bit : 0));  // E5M2 inf: 0x7C
    return f.uz ? f.nan_code : static_cast<uint8_t>(f.nan_code | (neg ? sign_bit : 0));
  };
  uint32_t code;
  if (a > top) {
    // Rounding to nearest even decides overflow: the next step above the top value would
    // have an odd or even mantissa.
    const double step = top - mags[mags.size() - 2];
    const double half = top + step / 2;
    if (std::isinf(a) || a > half || (a == half && (max_code & 1))) return overflow();
    code = max_code;
  } else {
    const size_t hi = std::lower_bound(mags.begin(), mags.end(), a) - mags.begin();
    if (mags[hi] == a || hi == 0) {
      code = static_cast<uint32_t>(hi);
    } else {
      const double dl = a - mags[hi - 1], dh = mags[hi] - a;
      code = static_cast<uint32_t>(dl < dh ? hi - 1 : dh < dl ? hi : ((hi - 1) % 2 == 0 ? hi - 1 : hi));
    }
  }
  if (code == 0 && f.uz) return 0;  // no negative zero
  return static_cast<uint8_t>(code | (neg ? sign_bit : 0));
}

// float8 E8M0: the float32 exponent field, rounded by round_mode (onnx.numpy_helper's rule).
uint8_t EncodeE8M0(double v, bool saturate, E8M0Rounding mode) {
  const float f = static_cast<float>(v);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t e = (bits >> 23) & 0xFF;
  if (e == 0xFF) return 0xFF;
  bool up = false;
  if (mode == E8M0Rounding::kUp) {
    up = (bits & 0x7FFFFF) != 0;
  } else if (mode == E8M0Rounding::kNearest) {
    const bool g = bits & 0x400000, r = bits & 0x200000, s = bits & 0x1FFFFF, lsb = e > 0;
    up = g && (r || s || lsb);
  }
  if (up && !(saturate && e == 0xFE)) ++e;
  return static_cast<uint8_t>(e);
}

// Integer element types: range as (bits, signed).
bool IntFormat(DataType t, int* bits, bool* is_signed) {
  switch (t) {
    case DataType::kInt4: *bits = 4; *is_signed = true; return true;
    case DataType::kUint4: *bits = 4; *is_signed = false; return true;
    case DataType::kInt2: *bits = 2; *is_signed = true; return true;
    case DataType::kUint2: *bits = 2; *is_signed = false; return true;
    default: return false;
  }
}

}  // namespace

bool IsLowPrecision(DataType t) {
  const int v = static_cast<int>(t);
  return v >= 17 && v <= 26;
}

bool IsLowPrecisionFloat(DataType t) { return FormatOf(t) != nullptr || t == DataType::kFloat8E8M0; }

int PackedBits(DataType t) {
  switch (t) {
    case DataType::kInt4: case DataType::kUint4: case DataType::kFloat4E2M1: return 4;
    case DataType::kInt2: case DataType::kUint2: return 2;
    default: return 8;
  }
}

double LowPrecisionToDouble(DataType t, uint8_t stored) {
  int bits;
  bool is_signed;
  if (IntFormat(t, &bits, &is_signed))
    return is_signed ? static_cast<double>(static_cast<int8_t>(stored)) : static_cast<double>(stored);
  if (t == DataType::kFloat8E8M0) return stored == 0xFF ? kNaN : std::ldexp(1.0, static_cast<int>(stored) - 127);
  const Format* f = FormatOf(t);
  if (!f) return kNaN;
  const uint32_t sign_bit = 1u << (CodeBits(*f) - 1);
  if (f->uz && stored == 0x80) return kNaN;
  const double mag = Decode(*f, stored & (sign_bit - 1));
  return (stored & sign_bit) ? -mag : mag;
}

uint8_t LowPrecisionFromDouble(DataType t, double v, bool saturate, E8M0Rounding e8m0) {
  int bits;
  bool is_signed;
  if (IntFormat(t, &bits, &is_signed))
    return LowPrecisionFromInt64(t, std::isfinite(v) && std::fabs(v) < 0x1p63 ? static_cast<int64_t>(v) : 0);
  if (t == DataType::kFloat8E8M0) return EncodeE8M0(v, saturate, e8m0);
  const Format* f = FormatOf(t);
  return f ? EncodeFloat(*f, v, saturate) : 0;
}

uint8_t LowPrecisionFromInt64(DataType t, int64_t v) {
  int bits;
  bool is_signed;
  if (!IntFormat(t, &bits, &is_signed)) return 0;
  const uint64_t low = static_cast<uint64_t>(v) & ((1u << bits) - 1);
  if (is_signed && (low >> (bits - 1))) return static_cast<uint8_t>(static_cast<int8_t>(low - (1u << bits)));
  return static_cast<uint8_t>(low);
}

}  // namespace tandem
