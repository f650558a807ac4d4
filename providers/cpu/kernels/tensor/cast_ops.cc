// Type conversions: Cast (a numeric type or string to another; 'to' is a string attribute
// at opset 1), CastLike (the type of a second input) and BitCast (the same bits read as
// another type of one width). Strings print and parse as numpy does.
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <strings.h>
#include <type_traits>

#include "graph/low_precision.h"
#include "ops/cast_element.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

absl::Status NeedInput(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing required input '") + what + "'");
  return absl::OkStatus();
}

// Numeric conversion: half types through float, the rest as CastElement (shared with the
// GPU). float -> bfloat16 rounds to nearest even, except that `truncate_bf16` drops the low
// mantissa bits as onnx's reference did before opset 19 (the 1.12 suite stores that).
template <typename To, typename From>
To ConvertValue(From v, bool truncate_bf16 = false) {
  constexpr bool from_half = std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (from_half) {
    return ConvertValue<To, float>(static_cast<float>(v), truncate_bf16);
  } else if constexpr (std::is_same_v<To, Float16>) {
    return Float16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    float f = static_cast<float>(v);
    if (!truncate_bf16) return BFloat16(f);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    BFloat16 r;
    r.bits = std::isnan(f) ? static_cast<uint16_t>((bits >> 16) | 0x40u) : static_cast<uint16_t>(bits >> 16);
    return r;
  } else {
    return CastElement<To, From>(v);
  }
}

// Rewrites shortest scientific text ("6.55e+04") in plain notation ("65500") when the
// decimal exponent is in [-4, 16), as numpy prints floats; other values stay scientific.
std::string PlainNotation(const std::string& sci) {
  const size_t epos = sci.find('e');
  if (epos == std::string::npos) return sci;
  const int exp = std::atoi(sci.c_str() + epos + 1);
  if (exp < -4 || exp >= 16) return sci;
  std::string mant = sci.substr(0, epos), sign;
  if (!mant.empty() && mant[0] == '-') { sign = "-"; mant.erase(0, 1); }
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp >= 0) {
    if (static_cast<int>(digits.size()) <= exp + 1) {
      out = digits + std::string(exp + 1 - digits.size(), '0');
    } else {
      out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
  } else {
    out = "0." + std::string(-exp - 1, '0') + digits;
  }
  return sign + out;
}

// Shortest decimal text that reads back to the same value of type T.
template <typename T>
std::string ToText(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> ||
                       std::is_floating_point_v<T>) {
    const double d = static_cast<double>(static_cast<std::conditional_t<
        std::is_floating_point_v<T>, T, float>>(v));
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d < 0 ? "-INF" : "INF";
    char buf[64];
    if constexpr (std::is_floating_point_v<T>) {
      auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
      return PlainNotation(std::string(buf, res.ptr));
    } else {
      for (int prec = 0; prec <= 8; ++prec) {
        std::snprintf(buf, sizeof(buf), "%.*e", prec, d);
        if (T(std::strtof(buf, nullptr)).bits == v.bits) break;
      }
      return PlainNotation(buf);
    }
  } else {
    return std::to_string(v);
  }
}

// Parses numbers incl. "INF", "+INF", "-INF", "NaN" (case-insensitive).
template <typename T>
T FromText(const std::string& s) {
  const char* p = s.c_str();
  while (*p == ' ' || *p == '\t') ++p;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    char* end = nullptr;
    errno = 0;
    if constexpr (std::is_unsigned_v<T>) {
      if (*p != '-') {
        unsigned long long u = std::strtoull(p, &end, 10);
        if (end != p && *end == '\0' && errno == 0) return static_cast<T>(u);
      }
    }
    long long i = std::strtoll(p, &end, 10);
    if (end != p && *end == '\0' && errno == 0) return static_cast<T>(i);
    return ConvertValue<T, double>(std::strtod(p, nullptr));
  } else if constexpr (std::is_same_v<T, double>) {
    return std::strtod(p, nullptr);
  } else {
    return ConvertValue<T, float>(std::strtof(p, nullptr));
  }
}

// How a Cast rounds: bfloat16 by truncation before opset 19; float8 saturating (opset 19's
// `saturate`, default on); float8 E8M0 by `round_mode` (opset 24, default up).
struct CastMode {
  bool truncate_bf16 = false;
  bool saturate = true;
  E8M0Rounding e8m0 = E8M0Rounding::kUp;

  explicit CastMode(const KernelInfo& info)
      : truncate_bf16(info.opset < 19), saturate(info.node.attr_int("saturate", 1) != 0) {
    const std::string r = info.node.attr_string("round_mode", "up");
    e8m0 = r == "down" ? E8M0Rounding::kDown : r == "nearest" ? E8M0Rounding::kNearest : E8M0Rounding::kUp;
  }
};

// An integer (or bool) x cast to int4/uint4/int2/uint2 keeps each value's low bits, read
// from the value itself (a double would round int64s beyond 2^53). False, with nothing
// written, when x is not of an integer type.
bool NarrowIntegers(const Tensor& x, Tensor& y) {
  const int64_t n = x.numel();
  uint8_t* out = y.data<uint8_t>();
  if (IsLowPrecision(x.dtype())) {
    if (IsLowPrecisionFloat(x.dtype())) return false;
    const uint8_t* in = x.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i)
      out[i] = LowPrecisionFromInt64(y.dtype(), static_cast<int64_t>(LowPrecisionToDouble(x.dtype(), in[i])));
    return true;
  }
  bool integral = false;
  VisitNumericType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      integral = true;
      const T* in = x.data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = LowPrecisionFromInt64(y.dtype(), static_cast<int64_t>(in[i]));
    }
  });
  return integral;
}

// Casts from or to a narrow type (graph/low_precision.h) go through double, which holds
// every value of both sides exactly (strings parse as double), but for integers into the
// narrow integer types (NarrowIntegers).
absl::Status CastNarrow(const Tensor& x, Tensor& y, const CastMode& mode) {
  const int64_t n = x.numel();
  auto value = [&](int64_t i) {
    return x.dtype() == DataType::kString ? std::strtod(x.data<std::string>()[i].c_str(), nullptr)
                                          : x.ElementAsDouble(i);
  };
  if (IsLowPrecision(y.dtype()) && !IsLowPrecisionFloat(y.dtype()) && NarrowIntegers(x, y))
    return absl::OkStatus();
  if (IsLowPrecision(y.dtype())) {
    for (int64_t i = 0; i < n; ++i)
      y.data<uint8_t>()[i] = LowPrecisionFromDouble(y.dtype(), value(i), mode.saturate, mode.e8m0);
    return absl::OkStatus();
  }
  if (y.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) y.data<std::string>()[i] = ToText(static_cast<float>(value(i)));
    return absl::OkStatus();
  }
  const bool ok = VisitNumericType(y.dtype(), [&](auto tt) {
    using To = decltype(tt);
    for (int64_t i = 0; i < n; ++i) y.data<To>()[i] = ConvertValue<To, double>(value(i), mode.truncate_bf16);
  });
  return ok ? absl::OkStatus()
            : absl::InvalidArgumentError(std::string("cannot cast ") + DataTypeName(x.dtype()) + " to " +
                                         DataTypeName(y.dtype()));
}

absl::Status CastTensor(const Tensor& x, Tensor& y, const CastMode& mode) {
  if (IsLowPrecision(x.dtype()) || IsLowPrecision(y.dtype())) return CastNarrow(x, y, mode);
  const bool truncate_bf16 = mode.truncate_bf16;
  const int64_t n = x.numel();
  const DataType from = x.dtype(), to = y.dtype();
  if (from == DataType::kString && to == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) y.data<std::string>()[i] = x.data<std::string>()[i];
    return absl::OkStatus();
  }
  bool ok = true;
  if (from == DataType::kString) {
    const std::string* src = x.data<std::string>();
    ok = VisitNumericType(to, [&](auto tt) {
      using To = decltype(tt);
      To* dst = y.data<To>();
      for (int64_t i = 0; i < n; ++i) dst[i] = FromText<To>(src[i]);
    });
  } else if (to == DataType::kString) {
    std::string* dst = y.data<std::string>();
    ok = VisitNumericType(from, [&](auto ft) {
      using From = decltype(ft);
      const From* src = x.data<From>();
      for (int64_t i = 0; i < n; ++i) dst[i] = ToText(src[i]);
    });
  } else {
    ok = VisitNumericType(from, [&](auto ft) {
      using From = decltype(ft);
      const From* src = x.data<From>();
      VisitNumericType(to, [&](auto tt) {
        using To = decltype(tt);
        To* dst = y.data<To>();
        if constexpr (std::is_same_v<From, To>) {
          if (n) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(To));
        } else {
          for (int64_t i = 0; i < n; ++i) dst[i] = ConvertValue<To, From>(src[i], truncate_bf16);
        }
      });
    });
  }
  if (!ok)
    return absl::InvalidArgumentError(std::string("cannot cast ") + DataTypeName(from) + " to " +
                                      DataTypeName(to));
  return absl::OkStatus();
}

// Output 0 = x cast to `to` (x itself when it already has that type).
absl::Status CastOutput(KernelContext& ctx, const Tensor& x, DataType to, const CastMode& mode) {
  if (to == x.dtype()) {
    ctx.SetOutput(0, x);
    return absl::OkStatus();
  }
  Tensor& y = ctx.AllocateOutput(0, to, x.dims());
  return CastTensor(x, y, mode);
}

bool CastableType(DataType t) {
  return t == DataType::kString || IsLowPrecision(t) || VisitNumericType(t, [](auto) {});
}

// Cast-1 names the target type as a string attribute ("FLOAT", "INT64", ...).
DataType TypeFromName(const std::string& name) {
  static const std::pair<const char*, DataType> kNames[] = {
      {"FLOAT", DataType::kFloat},   {"UINT8", DataType::kUint8},
      {"INT8", DataType::kInt8},     {"UINT16", DataType::kUint16},
      {"INT16", DataType::kInt16},   {"INT32", DataType::kInt32},
      {"INT64", DataType::kInt64},   {"STRING", DataType::kString},
      {"BOOL", DataType::kBool},     {"FLOAT16", DataType::kFloat16},
      {"DOUBLE", DataType::kDouble}, {"UINT32", DataType::kUint32},
      {"UINT64", DataType::kUint64}, {"BFLOAT16", DataType::kBfloat16}};
  for (const auto& [s, t] : kNames)
    if (strcasecmp(s, name.c_str()) == 0) return t;
  return DataType::kUndefined;
}

class Cast : public Kernel {
 public:
  explicit Cast(const KernelInfo& info) : mode_(info) {
    const Attribute* a = info.node.attr("to");
    if (a && a->kind == Attribute::Kind::kString) {
      to_ = TypeFromName(a->s);
    } else if (a && a->kind == Attribute::Kind::kInt && IsKnownDataType(static_cast<int32_t>(a->i))) {
      to_ = static_cast<DataType>(a->i);
    }
  }
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    if (!CastableType(to_))
      return absl::InvalidArgumentError("attribute 'to' is missing or names an unsupported type");
    return CastOutput(ctx, *x, to_, mode_);
  }

 private:
  CastMode mode_;
  DataType to_ = DataType::kUndefined;
};

class CastLike : public Kernel {
 public:
  explicit CastLike(const KernelInfo& info) : mode_(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* like = ctx.input(1);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    if (auto s = NeedInput(like, "target_type"); !s.ok()) return s;
    const DataType to = like->dtype();
    if (!CastableType(to))
      return absl::InvalidArgumentError(std::string("cannot cast to ") + DataTypeName(to));
    return CastOutput(ctx, *x, to, mode_);
  }

 private:
  CastMode mode_;
};

// BitCast (opset 26): reinterprets each element's bits as type `to` of the same width.
class BitCast : public Kernel {
 public:
  explicit BitCast(const KernelInfo& info)
      : to_(IsKnownDataType(static_cast<int32_t>(info.node.attr_int("to", 0)))
                ? static_cast<DataType>(info.node.attr_int("to", 0))
                : DataType::kUndefined) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    if (to_ == DataType::kUndefined || to_ == DataType::kString || x->dtype() == DataType::kString ||
        SizeOf(to_) != SizeOf(x->dtype()))
      return absl::InvalidArgumentError(std::string("cannot bit-cast ") + DataTypeName(x->dtype()) + " to " +
                                        DataTypeName(to_) + ": both must be numeric types of one width");
    Tensor& y = ctx.AllocateOutput(0, to_, x->dims());
    if (x->bytes()) std::memcpy(y.raw(), x->raw(), x->bytes());
    return absl::OkStatus();
  }

 private:
  DataType to_;
};

}  // namespace

void RegisterCastKernels(KernelRegistry& r) {
  r.Add("Cast", 1, kMaxOpset, types::kAllAndNarrow, Make<Cast>());
  r.Add("CastLike", 15, kMaxOpset, types::kAllAndNarrow, Make<CastLike>());
  std::vector<DataType> numeric_bool = types::kNumeric;
  numeric_bool.push_back(DataType::kBool);
  r.Add("BitCast", 26, kMaxOpset, numeric_bool, Make<BitCast>());
}

}  // namespace tandem::cpu
