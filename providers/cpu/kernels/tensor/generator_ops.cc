// Generator kernels: ConstantOfShape, Range and the random ops (RandomUniform,
// RandomNormal, their *Like forms and Bernoulli) drawn from a per-kernel std::mt19937,
// seeded from the 'seed' attribute when given. (Constant nodes become initializers at
// import, so there is no Constant kernel.)
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>

#include "graph/numeric_cast.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

absl::Status Missing(const char* what) {
  return absl::InvalidArgumentError(std::string("missing required input '") + what + "'");
}

absl::StatusOr<Dims> ReadShape(const Tensor& t) {
  if (t.rank() > 1) return absl::InvalidArgumentError("shape input must be 1-D");
  Dims d = ReadInt64s(t);
  for (int64_t v : d)
    if (v < 0) return absl::InvalidArgumentError("shape " + DimsToString(d) + " has a negative dim");
  return d;
}

// ConstantOfShape: a tensor of the given shape filled with the one-element 'value'
// attribute (float 0 by default).
class ConstantOfShape : public Kernel {
 public:
  explicit ConstantOfShape(const KernelInfo& info) {
    const Attribute* a = info.node.attr("value");
    if (a && a->kind == Attribute::Kind::kTensor && a->t.defined()) value_ = a->t;
    else value_ = Tensor::Scalar<float>(0.f);
  }
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* s = ctx.input(0);
    if (!s) return Missing("input");
    if (value_.numel() != 1) return absl::InvalidArgumentError("attribute 'value' must hold one element");
    auto dims = ReadShape(*s);
    if (!dims.ok()) return dims.status();
    if (auto st = CheckOutputDims(*dims); !st.ok()) return st;
    Tensor& y = ctx.AllocateOutput(0, value_.dtype(), *dims);
    bool ok = VisitElementWidth(value_.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T v = value_.data<T>()[0];
      T* dst = y.data<T>();
      // The count read once: stores through dst may alias y's dims for all the compiler
      // knows (one-byte types), which kept it recomputing the product each element.
      ParallelBlocks(y.numel(), [&](int64_t begin, int64_t end) { std::fill(dst + begin, dst + end, v); });
    });
    if (!ok) return absl::InvalidArgumentError("unsupported value type");
    return absl::OkStatus();
  }

 private:
  Tensor value_;
};

// Range: start + i * delta for i < max(ceil((limit - start) / delta), 0).
class Range : public Kernel {
 public:
  explicit Range(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* start = ctx.input(0);
    const Tensor* limit = ctx.input(1);
    const Tensor* delta = ctx.input(2);
    if (!start) return Missing("start");
    if (!limit) return Missing("limit");
    if (!delta) return Missing("delta");
    if (start->numel() != 1 || limit->numel() != 1 || delta->numel() != 1)
      return absl::InvalidArgumentError("start, limit and delta must be scalars");
    if (limit->dtype() != start->dtype() || delta->dtype() != start->dtype())
      return absl::InvalidArgumentError("start, limit and delta must have the same type");
    absl::Status st;
    bool ok = VisitNumericType(start->dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        st = absl::InvalidArgumentError("Range does not support bool");
      } else if constexpr (std::is_integral_v<T>) {
        const int64_t s = start->ElementAsInt64(0), l = limit->ElementAsInt64(0),
                      d = delta->ElementAsInt64(0);
        if (d == 0) { st = absl::InvalidArgumentError("delta must not be 0"); return; }
        // 128-bit arithmetic: the span of two int64 values can overflow int64.
        __int128 n128 = 0;
        if (d > 0 && l > s) n128 = ((__int128)l - s + d - 1) / d;
        if (d < 0 && l < s) n128 = ((__int128)s - l - d - 1) / -(__int128)d;
        if (n128 > (__int128{1} << 48)) { st = absl::InvalidArgumentError("Range output is too large"); return; }
        const int64_t n = static_cast<int64_t>(n128);
        Tensor& y = ctx.AllocateOutput(0, start->dtype(), {n});
        T* out = y.data<T>();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(s + static_cast<int64_t>(i * (__int128)d));
      } else {
        const double s = start->ElementAsDouble(0), l = limit->ElementAsDouble(0),
                     d = delta->ElementAsDouble(0);
        if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
          st = absl::InvalidArgumentError("start, limit and delta must be finite and delta non-zero");
          return;
        }
        const double count = std::ceil((l - s) / d);
        if (count > 281474976710656.0) { st = absl::InvalidArgumentError("Range output is too large"); return; }
        const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
        Tensor& y = ctx.AllocateOutput(0, start->dtype(), {n});
        T* out = y.data<T>();
        for (int64_t i = 0; i < n; ++i) {
          const double v = s + static_cast<double>(i) * d;
          if constexpr (std::is_same_v<T, double>) out[i] = v;
          else out[i] = T(static_cast<float>(v));
        }
      }
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return st;
  }
};

// ---------------------------------------------------------------------------------------
// Random ops

enum class Dist { kUniform, kNormal, kBernoulli };

class RandomOp : public Kernel {
 public:
  RandomOp(const KernelInfo& info, Dist dist, bool like)
      : dist_(dist),
        like_(like),
        dtype_attr_(static_cast<int32_t>(info.node.attr_int("dtype", 0))),
        shape_(info.node.attr_ints("shape")),
        a_(dist == Dist::kNormal ? info.node.attr_float("mean", 0.f) : info.node.attr_float("low", 0.f)),
        b_(dist == Dist::kNormal ? info.node.attr_float("scale", 1.f) : info.node.attr_float("high", 1.f)) {
    if (info.node.has_attr("seed"))
      gen_.seed(static_cast<uint32_t>(NumericCast<int64_t>(info.node.attr_float("seed", 0.f))));
    else
      gen_.seed(std::random_device{}());
  }

  absl::Status Compute(KernelContext& ctx) override {
    Dims dims = shape_;
    DataType dt = DataType::kFloat;
    const Tensor* x = ctx.input(0);
    if (like_) {
      if (!x) return Missing("input");
      dims = x->dims();
      dt = x->dtype();
    }
    if (dtype_attr_ != 0) {
      if (!IsKnownDataType(dtype_attr_))
        return absl::InvalidArgumentError("unknown dtype " + std::to_string(dtype_attr_));
      dt = static_cast<DataType>(dtype_attr_);
    }
    for (int64_t d : dims)
      if (d < 0) return absl::InvalidArgumentError("shape " + DimsToString(dims) + " has a negative dim");
    if (auto st = CheckOutputDims(dims); !st.ok()) return st;
    if (dist_ != Dist::kBernoulli && !IsFloatingPoint(dt))
      return absl::InvalidArgumentError(std::string("output type must be floating point, not ") +
                                        DataTypeName(dt));
    if (dist_ == Dist::kUniform && !(a_ <= b_))
      return absl::InvalidArgumentError("low must not exceed high");
    if (dist_ == Dist::kNormal && !(b_ > 0))
      return absl::InvalidArgumentError("scale must be positive");
    Tensor& y = ctx.AllocateOutput(0, dt, dims);
    const int64_t n = y.numel();
    std::uniform_real_distribution<double> uni(dist_ == Dist::kUniform ? a_ : 0.0,
                                               dist_ == Dist::kUniform ? b_ : 1.0);
    std::normal_distribution<double> normal(a_, b_);
    bool ok = VisitNumericType(dt, [&](auto tag) {
      using T = decltype(tag);
      T* out = y.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        double v;
        if (dist_ == Dist::kUniform) v = uni(gen_);
        else if (dist_ == Dist::kNormal) v = normal(gen_);
        else v = uni(gen_) < x->ElementAsDouble(i) ? 1.0 : 0.0;
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
          out[i] = T(static_cast<float>(v));
        else
          out[i] = static_cast<T>(v);
      }
    });
    if (!ok) return absl::InvalidArgumentError(std::string("unsupported dtype ") + DataTypeName(dt));
    return absl::OkStatus();
  }

 private:
  Dist dist_;
  bool like_;
  int32_t dtype_attr_;
  Dims shape_;
  double a_, b_;
  std::mt19937 gen_;
};

template <Dist D, bool Like>
class RandomKernel : public RandomOp {
 public:
  explicit RandomKernel(const KernelInfo& info) : RandomOp(info, D, Like) {}
};

}  // namespace

void RegisterGeneratorKernels(KernelRegistry& r) {
  std::vector<DataType> numeric_bool = types::kNumeric;
  numeric_bool.push_back(DataType::kBool);
  r.Add("ConstantOfShape", 9, kMaxOpset, {DataType::kInt64}, Make<ConstantOfShape>());
  r.Add("Range", 11, 26,
        {DataType::kFloat, DataType::kDouble, DataType::kInt16, DataType::kInt32, DataType::kInt64},
        Make<Range>());
  r.Add("Range", 27, kMaxOpset,  // 27 admits float16 and bfloat16
        {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBfloat16,
         DataType::kInt16, DataType::kInt32, DataType::kInt64},
        Make<Range>());
  r.Add("RandomUniform", 1, kMaxOpset, {}, Make<RandomKernel<Dist::kUniform, false>>());
  r.Add("RandomNormal", 1, kMaxOpset, {}, Make<RandomKernel<Dist::kNormal, false>>());
  r.Add("RandomUniformLike", 1, kMaxOpset, numeric_bool, Make<RandomKernel<Dist::kUniform, true>>());
  r.Add("RandomNormalLike", 1, kMaxOpset, numeric_bool, Make<RandomKernel<Dist::kNormal, true>>());
  r.Add("Bernoulli", 15, kMaxOpset, types::kFloats, Make<RandomKernel<Dist::kBernoulli, true>>());
}

}  // namespace tandem::cpu
