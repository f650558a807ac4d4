// Shape-only and conversion kernels: Reshape, Flatten, Squeeze, Unsqueeze, Identity (all
// alias their input), Shape, Size, Expand, Cast and CastLike.
#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <strings.h>
#include <type_traits>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {


absl::Status NeedInput(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing required input '") + what + "'");
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Reshape: `shape` is an input from opset 5 (an attribute before); 0 copies the input dim
// unless allowzero (opset 14), one -1 is inferred. The output aliases the input.
class Reshape : public Kernel {
 public:
  explicit Reshape(const KernelInfo& info)
      : opset_(info.opset),
        allowzero_(info.node.attr_int("allowzero", 0) != 0),
        attr_shape_(info.node.attr_ints("shape")) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    std::vector<int64_t> shape;
    if (opset_ < 5) {
      shape = attr_shape_;
    } else {
      const Tensor* st = ctx.input(1);
      if (!st) return absl::InvalidArgumentError("missing required input 'shape'");
      if (st->rank() > 1) return absl::InvalidArgumentError("input 'shape' must be 1-D");
      shape = ReadInt64s(*st);
    }
    const Dims& in = x->dims();
    Dims out(shape.size());
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = shape[i];
      if (d == 0 && !allowzero_) {
        if (i >= in.size())
          return absl::InvalidArgumentError("shape " + DimsToString(shape) + ": 0 at position " +
                                            std::to_string(i) + " has no input dim to copy (input " +
                                            DimsToString(in) + ")");
        d = in[i];
      } else if (d == -1) {
        if (infer >= 0)
          return absl::InvalidArgumentError("shape " + DimsToString(shape) + " has more than one -1");
        infer = static_cast<int>(i);
        out[i] = -1;
        continue;
      } else if (d < 0) {
        return absl::InvalidArgumentError("shape " + DimsToString(shape) + " has invalid dim " +
                                          std::to_string(d));
      }
      out[i] = d;
      if (d > 0 && known > (int64_t{1} << 62) / d)
        return absl::InvalidArgumentError("shape " + DimsToString(shape) + " is too large");
      known *= d;
    }
    const int64_t n = x->numel();
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        return absl::InvalidArgumentError("cannot infer the -1 in shape " + DimsToString(shape) +
                                          " for input of shape " + DimsToString(in));
      out[infer] = n / known;
    } else if (known != n) {
      return absl::InvalidArgumentError("cannot reshape input of shape " + DimsToString(in) +
                                        " to " + DimsToString(out));
    }
    ctx.SetOutput(0, x->Reshaped(std::move(out)));
    return absl::OkStatus();
  }

 private:
  int opset_;
  bool allowzero_;
  std::vector<int64_t> attr_shape_;
};

// Flatten: [d0..d(axis-1)] x [d(axis)..] as a 2-D alias of the input.
class Flatten : public Kernel {
 public:
  explicit Flatten(const KernelInfo& info) : axis_(info.node.attr_int("axis", 1)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    const int r = x->rank();
    int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    if (axis < 0 || axis > r)
      return absl::InvalidArgumentError("axis " + std::to_string(axis_) +
                                        " is out of range for rank " + std::to_string(r));
    const int a = static_cast<int>(axis);
    ctx.SetOutput(0, x->Reshaped({DimProduct(x->dims(), 0, a), DimProduct(x->dims(), a, r)}));
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

// Squeeze / Unsqueeze: axes from the attribute before opset 13, from input 1 after.
class SqueezeBase : public Kernel {
 public:
  explicit SqueezeBase(const KernelInfo& info)
      : opset_(info.opset),
        has_attr_axes_(info.node.has_attr("axes")),
        attr_axes_(info.node.attr_ints("axes")) {}

 protected:
  // Sets *given to whether axes were specified.
  std::vector<int64_t> Axes(KernelContext& ctx, bool* given) const {
    if (opset_ < 13) {
      *given = has_attr_axes_;
      return attr_axes_;
    }
    const Tensor* a = ctx.input(1);
    *given = a != nullptr;
    return a ? ReadInt64s(*a) : std::vector<int64_t>{};
  }
  int opset_;
  bool has_attr_axes_;
  std::vector<int64_t> attr_axes_;
};

class Squeeze : public SqueezeBase {
 public:
  using SqueezeBase::SqueezeBase;
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    bool given = false;
    std::vector<int64_t> axes = Axes(ctx, &given);
    const int r = x->rank();
    std::vector<bool> drop(r, false);
    if (!given || axes.empty()) {  // no (or empty) axes: drop every size-1 dim
      for (int i = 0; i < r; ++i) drop[i] = x->dim(i) == 1;
    } else {
      for (int64_t a : axes) {
        int64_t n = a < 0 ? a + r : a;
        if (n < 0 || n >= r)
          return absl::InvalidArgumentError("axis " + std::to_string(a) +
                                            " is out of range for rank " + std::to_string(r));
        if (x->dim(static_cast<int>(n)) != 1)
          return absl::InvalidArgumentError("cannot squeeze axis " + std::to_string(a) +
                                            " of size " + std::to_string(x->dim(static_cast<int>(n))) +
                                            " (input shape " + DimsToString(x->dims()) + ")");
        drop[n] = true;
      }
    }
    Dims out;
    for (int i = 0; i < r; ++i)
      if (!drop[i]) out.push_back(x->dim(i));
    ctx.SetOutput(0, x->Reshaped(std::move(out)));
    return absl::OkStatus();
  }
};

class Unsqueeze : public SqueezeBase {
 public:
  using SqueezeBase::SqueezeBase;
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    bool given = false;
    std::vector<int64_t> axes = Axes(ctx, &given);
    if (!given) return absl::InvalidArgumentError("axes are required");
    const int r = x->rank() + static_cast<int>(axes.size());
    std::vector<bool> ins(r, false);
    for (int64_t a : axes) {
      int64_t n = a < 0 ? a + r : a;
      if (n < 0 || n >= r)
        return absl::InvalidArgumentError("axis " + std::to_string(a) +
                                          " is out of range for output rank " + std::to_string(r));
      if (ins[n]) return absl::InvalidArgumentError("axis " + std::to_string(a) + " is repeated");
      ins[n] = true;
    }
    Dims out(r);
    int j = 0;
    for (int i = 0; i < r; ++i) out[i] = ins[i] ? 1 : x->dim(j++);
    ctx.SetOutput(0, x->Reshaped(std::move(out)));
    return absl::OkStatus();
  }
};

class Identity : public Kernel {
 public:
  explicit Identity(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    ctx.SetOutput(0, *x);
    return absl::OkStatus();
  }
};

// Shape: int64 dims of the input, sliced by start/end (opset 15) with clamping.
class Shape : public Kernel {
 public:
  explicit Shape(const KernelInfo& info)
      : start_(info.node.attr_int("start", 0)),
        end_(info.node.attr_int("end", std::numeric_limits<int64_t>::max())),
        sliced_(info.opset >= 15) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    const int64_t r = x->rank();
    int64_t b = 0, e = r;
    if (sliced_) {
      b = start_ < 0 ? start_ + r : start_;
      e = end_ < 0 ? end_ + r : end_;
      b = std::clamp<int64_t>(b, 0, r);
      e = std::clamp<int64_t>(e, 0, r);
    }
    const int64_t n = std::max<int64_t>(e - b, 0);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = x->dims()[b + i];
    return absl::OkStatus();
  }

 private:
  int64_t start_, end_;
  bool sliced_;
};

class Size : public Kernel {
 public:
  explicit Size(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    ctx.AllocateOutput(0, DataType::kInt64, {}).data<int64_t>()[0] = x->numel();
    return absl::OkStatus();
  }
};

// Expand: bidirectional broadcast of the input to `shape`.
class Expand : public Kernel {
 public:
  explicit Expand(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* st = ctx.input(1);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    if (auto s = NeedInput(st, "shape"); !s.ok()) return s;
    if (st->rank() > 1) return absl::InvalidArgumentError("input 'shape' must be 1-D");
    std::vector<int64_t> shape = ReadInt64s(*st);
    for (int64_t d : shape)
      if (d < 0)
        return absl::InvalidArgumentError("shape " + DimsToString(shape) + " has a negative dim");
    auto out = BroadcastShapes(x->dims(), shape);
    if (!out.ok()) return out.status();
    if (auto st = CheckOutputDims(*out); !st.ok()) return st;
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), *out);
    const std::vector<int64_t> strides = BroadcastStrides(x->dims(), *out);
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      StridedCopy(x->data<T>(), *out, strides, y.data<T>());
    });
    return absl::OkStatus();
  }
};

// ---------------------------------------------------------------------------------------
// Cast

// Numeric conversion with numpy-like results where C++ leaves behaviour undefined:
// float -> integer truncates through int64 (NaN and out-of-range give 0 / wrap),
// float -> bfloat16 truncates the mantissa as the ONNX reference of this opset range does.
template <typename To, typename From>
To ConvertValue(From v) {
  constexpr bool from_half = std::is_same_v<From, Float16> || std::is_same_v<From, BFloat16>;
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (from_half) {
    return ConvertValue<To, float>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, Float16>) {
    return Float16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    BFloat16 r;
    r.bits = std::isnan(f) ? static_cast<uint16_t>((bits >> 16) | 0x40u) : static_cast<uint16_t>(bits >> 16);
    return r;
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To(0);
    if constexpr (std::is_same_v<To, uint64_t>) {
      if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<To>(v);
    }
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0)
      return static_cast<To>(static_cast<int64_t>(v));
    return v < 0 ? static_cast<To>(std::numeric_limits<int64_t>::min()) : To(0);
  } else {
    return static_cast<To>(v);
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

absl::Status CastTensor(const Tensor& x, Tensor& y) {
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
          for (int64_t i = 0; i < n; ++i) dst[i] = ConvertValue<To, From>(src[i]);
        }
      });
    });
  }
  if (!ok)
    return absl::InvalidArgumentError(std::string("cannot cast ") + DataTypeName(from) + " to " +
                                      DataTypeName(to));
  return absl::OkStatus();
}

bool CastableType(DataType t) {
  return t == DataType::kString || VisitNumericType(t, [](auto) {});
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
  explicit Cast(const KernelInfo& info) {
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
    if (to_ == x->dtype()) {
      ctx.SetOutput(0, *x);
      return absl::OkStatus();
    }
    Tensor& y = ctx.AllocateOutput(0, to_, x->dims());
    return CastTensor(*x, y);
  }

 private:
  DataType to_ = DataType::kUndefined;
};

class CastLike : public Kernel {
 public:
  explicit CastLike(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* like = ctx.input(1);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    if (auto s = NeedInput(like, "target_type"); !s.ok()) return s;
    const DataType to = like->dtype();
    if (!CastableType(to))
      return absl::InvalidArgumentError(std::string("cannot cast to ") + DataTypeName(to));
    if (to == x->dtype()) {
      ctx.SetOutput(0, *x);
      return absl::OkStatus();
    }
    Tensor& y = ctx.AllocateOutput(0, to, x->dims());
    return CastTensor(*x, y);
  }
};

}  // namespace

void RegisterShapeKernels(KernelRegistry& r) {
  const auto& all = types::kAll;
  r.Add("Reshape", 1, kMaxOpset, all, Make<Reshape>());      // attr shape <5, allowzero 14
  r.Add("Flatten", 1, kMaxOpset, all, Make<Flatten>());      // negative axis from 11
  r.Add("Squeeze", 1, kMaxOpset, all, Make<Squeeze>());      // axes input from 13
  r.Add("Unsqueeze", 1, kMaxOpset, all, Make<Unsqueeze>());  // axes input from 13
  r.Add("Identity", 1, kMaxOpset, all, Make<Identity>());
  // Shape and Size read only dims, so their input may stay on any device.
  for (const char* op : {"Shape", "Size"}) {
    KernelDef d;
    d.op = op;
    d.since = 1;
    d.until = kMaxOpset;
    d.types = all;
    d.any_device = true;
    d.create = std::string(op) == "Shape" ? Make<Shape>() : Make<Size>();  // Shape: start/end from 15
    r.Add(std::move(d));
  }
  r.Add("Expand", 8, kMaxOpset, all, Make<Expand>());
  r.Add("Cast", 1, kMaxOpset, all, Make<Cast>());            // 'to' is a string at opset 1
  r.Add("CastLike", 15, kMaxOpset, all, Make<CastLike>());
}

}  // namespace tandem::cpu
