// Unary elementwise kernels: activations (Relu, Elu, Sigmoid, HardSwish, ...), math
// functions (Exp, Log, trig, Erf, Round, ...), predicates (IsNaN, IsInf, Not), Clip and
// BitwiseNot. float32 runs through cached oneDNN eltwise primitives where oneDNN has the
// function; other types and functions use reference loops.
#include <cmath>
#include <limits>
#include <type_traits>

#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/fast_tanh.h"
#include "providers/cpu/microkernels/tanh_arrays.h"

namespace tandem::cpu {
namespace {

using alg = dnnl::algorithm;

// ---- Op descriptions ------------------------------------------------------------------
// Each op: a ctor from the node, `operator()(C x)` on the compute type, `Dnnl()` naming a
// oneDNN algorithm (or false) and `Supports<T>()` listing element types.

struct FloatOnly {
  template <typename T> static constexpr bool Supports() { return kIsFloatLike<T>; }
  bool Dnnl(alg*, float*, float*) const { return false; }
};
struct SignedOrFloat : FloatOnly {
  template <typename T> static constexpr bool Supports() {
    return kIsFloatLike<T> || (kIsInt<T> && std::is_signed_v<T>);
  }
};
struct AnyNumeric : FloatOnly {
  template <typename T> static constexpr bool Supports() { return kIsFloatLike<T> || kIsInt<T>; }
};

#define SIMPLE_DNNL(a, al, be)                       \
  bool Dnnl(alg* g, float* x, float* y) const {      \
    *g = a; *x = al; *y = be; return true;           \
  }

struct ReluOp : SignedOrFloat {
  explicit ReluOp(const Node&) {}
  template <typename C> C operator()(C x) const { return x > C(0) ? x : C(0); }
  SIMPLE_DNNL(alg::eltwise_relu, 0.f, 0.f)
};
struct LeakyReluOp : FloatOnly {
  float alpha;
  explicit LeakyReluOp(const Node& n) : alpha(n.attr_float("alpha", 0.01f)) {}
  template <typename C> C operator()(C x) const { return x >= C(0) ? x : x * C(alpha); }
  SIMPLE_DNNL(alg::eltwise_relu, alpha, 0.f)
};
struct EluOp : FloatOnly {
  float alpha;
  explicit EluOp(const Node& n) : alpha(n.attr_float("alpha", 1.f)) {}
  template <typename C> C operator()(C x) const { return x >= C(0) ? x : C(alpha) * std::expm1(x); }
  SIMPLE_DNNL(alg::eltwise_elu, alpha, 0.f)
};
struct SeluOp : FloatOnly {
  float alpha, gamma;
  explicit SeluOp(const Node& n)
      : alpha(n.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(n.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <typename C> C operator()(C x) const {
    return C(gamma) * (x > C(0) ? x : C(alpha) * std::expm1(x));
  }
};
struct CeluOp : FloatOnly {
  float alpha;
  explicit CeluOp(const Node& n) : alpha(n.attr_float("alpha", 1.f)) {}
  template <typename C> C operator()(C x) const {
    return x > C(0) ? x : C(alpha) * std::expm1(x / C(alpha));
  }
};
struct SigmoidOp : FloatOnly {
  explicit SigmoidOp(const Node&) {}
  template <typename C> C operator()(C x) const {
    if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
    C e = std::exp(x);
    return e / (C(1) + e);
  }
  SIMPLE_DNNL(alg::eltwise_logistic, 0.f, 0.f)
};
struct HardSigmoidOp : FloatOnly {
  float alpha, beta;
  explicit HardSigmoidOp(const Node& n)
      : alpha(n.attr_float("alpha", 0.2f)), beta(n.attr_float("beta", 0.5f)) {}
  template <typename C> C operator()(C x) const {
    C v = C(alpha) * x + C(beta);
    return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
  }
};
struct HardSwishOp : FloatOnly {
  explicit HardSwishOp(const Node&) {}
  template <typename C> C operator()(C x) const {
    C v = x / C(6) + C(0.5);
    return x * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
  SIMPLE_DNNL(alg::eltwise_hardswish, kDnnlHardSwishAlpha, kDnnlHardSwishBeta)
};
struct TanhOp : FloatOnly {
  explicit TanhOp(const Node&) {}
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_same_v<C, float>) return TanhOne(x);  // fast_tanh.h: vectorizable
    else return std::tanh(x);
  }
  SIMPLE_DNNL(alg::eltwise_tanh, 0.f, 0.f)
};
template <typename C> C Softplus(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
struct SoftplusOp : FloatOnly {
  explicit SoftplusOp(const Node&) {}
  // oneDNN's soft_relu loses precision for x << 0; reference only.
  template <typename C> C operator()(C x) const { return Softplus(x); }
};
struct SoftsignOp : FloatOnly {
  explicit SoftsignOp(const Node&) {}
  template <typename C> C operator()(C x) const { return x / (C(1) + std::abs(x)); }
};
struct ThresholdedReluOp : FloatOnly {
  float alpha;
  explicit ThresholdedReluOp(const Node& n) : alpha(n.attr_float("alpha", 1.f)) {}
  template <typename C> C operator()(C x) const { return x > C(alpha) ? x : C(0); }
};
struct ShrinkOp : AnyNumeric {
  double bias, lambd;
  explicit ShrinkOp(const Node& n)
      : bias(n.attr_float("bias", 0.f)), lambd(n.attr_float("lambd", 0.5f)) {}
  template <typename C> C operator()(C x) const {
    double v = static_cast<double>(x);
    return static_cast<C>(v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0));
  }
};
struct GeluOp : FloatOnly {
  bool tanh_approx;
  explicit GeluOp(const Node& n) : tanh_approx(n.attr_string("approximate", "none") == "tanh") {}
  template <typename C> C operator()(C x) const {
    if (tanh_approx) {
      const C k = C(0.7978845608028654);  // sqrt(2/pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * C(0.7071067811865476)));
  }
  // oneDNN's gelu_tanh is imprecise for x << 0; use it for the erf form only.
  bool Dnnl(alg* g, float* a, float* b) const {
    *g = alg::eltwise_gelu_erf; *a = *b = 0.f;
    return !tanh_approx;
  }
};
struct SwishOp : FloatOnly {
  float alpha;
  explicit SwishOp(const Node& n) : alpha(n.attr_float("alpha", 1.f)) {}
  template <typename C> C operator()(C x) const { return x / (C(1) + std::exp(-C(alpha) * x)); }
};
struct MishOp : FloatOnly {
  explicit MishOp(const Node&) {}
  template <typename C> C operator()(C x) const { return x * std::tanh(Softplus(x)); }
};
struct AbsOp : AnyNumeric {
  explicit AbsOp(const Node&) {}
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) return x;
    else return x < C(0) ? static_cast<C>(-x) : x;
  }
  SIMPLE_DNNL(alg::eltwise_abs, 0.f, 0.f)
};
struct NegOp : SignedOrFloat {
  explicit NegOp(const Node&) {}
  template <typename C> C operator()(C x) const { return static_cast<C>(-x); }
};
struct SignOp : AnyNumeric {
  explicit SignOp(const Node&) {}
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      if (x != x) return x;
    return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
  }
};
struct RoundOp : FloatOnly {
  explicit RoundOp(const Node&) {}
  template <typename C> C operator()(C x) const { return std::nearbyint(x); }  // half to even
};
struct BitwiseNotOp {
  explicit BitwiseNotOp(const Node&) {}
  template <typename T> static constexpr bool Supports() { return kIsInt<T>; }
  bool Dnnl(alg*, float*, float*) const { return false; }
  template <typename C> C operator()(C x) const { return static_cast<C>(~x); }
};
struct NotOp {
  explicit NotOp(const Node&) {}
  template <typename T> static constexpr bool Supports() { return std::is_same_v<T, bool>; }
  bool Dnnl(alg*, float*, float*) const { return false; }
  template <typename C> C operator()(C x) const { return !x; }
};

// Plain float functions: one struct per std:: function.
#define FLOAT_FN(Name, expr, ...)                                     \
  struct Name : FloatOnly {                                           \
    explicit Name(const Node&) {}                                     \
    template <typename C> C operator()(C x) const { return expr; }    \
    __VA_ARGS__                                                       \
  };
FLOAT_FN(ExpOp, std::exp(x), SIMPLE_DNNL(alg::eltwise_exp, 0.f, 0.f))
FLOAT_FN(LogOp, std::log(x))  // oneDNN's log is off by ~1e-6 near 1
FLOAT_FN(SqrtOp, std::sqrt(x), SIMPLE_DNNL(alg::eltwise_sqrt, 0.f, 0.f))
FLOAT_FN(ReciprocalOp, C(1) / x)
FLOAT_FN(FloorOp, std::floor(x))
FLOAT_FN(CeilOp, std::ceil(x))
FLOAT_FN(ErfOp, std::erf(x))
FLOAT_FN(SinOp, std::sin(x))
FLOAT_FN(CosOp, std::cos(x))
FLOAT_FN(TanOp, std::tan(x))
FLOAT_FN(AsinOp, std::asin(x))
FLOAT_FN(AcosOp, std::acos(x))
FLOAT_FN(AtanOp, std::atan(x))
FLOAT_FN(SinhOp, std::sinh(x))
FLOAT_FN(CoshOp, std::cosh(x))
FLOAT_FN(AsinhOp, std::asinh(x))
FLOAT_FN(AcoshOp, std::acosh(x))
FLOAT_FN(AtanhOp, std::atanh(x))
#undef FLOAT_FN
#undef SIMPLE_DNNL

// ---- Kernels ---------------------------------------------------------------------------

absl::Status TypeError(const char* what, DataType t) {
  return absl::InvalidArgumentError(std::string(what) + " does not support element type " +
                                    DataTypeName(t));
}

template <typename T, typename F>
void MapElements(const T* x, T* y, int64_t n, const F& f) {
  ParallelFor(n, [&](int64_t i) { y[i] = FromCompute<T>(f(static_cast<ComputeT<T>>(x[i]))); });
}

template <typename Op>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const KernelInfo& info) : op_(info.node) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* xp = ctx.input(0);
    if (!xp) return absl::InvalidArgumentError("input 0 is missing");
    const Tensor& x = *xp;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.numel() == 0) return absl::OkStatus();
    alg a;
    float alpha = 0, beta = 0;
    if (x.dtype() == DataType::kFloat && op_.Dnnl(&a, &alpha, &beta) &&
        dnnl_.Run(a, alpha, beta, x, y))
      return absl::OkStatus();
    bool done = false;
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Op::template Supports<T>()) {
        MapElements(x.data<T>(), y.data<T>(), x.numel(), op_);
        done = true;
      }
    });
    return done ? absl::OkStatus() : TypeError("this op", x.dtype());
  }

 private:
  Op op_;
  DnnlEltwise dnnl_;
};

// Gelu: the erf form as UnaryKernel runs it (oneDNN's gelu_erf for float32); the float32
// tanh form in one pass with Tandem's tanh, its widest build (microkernels/tanh_arrays.h: the
// arithmetic of the nodes exporters write for it; oneDNN's own gelu_tanh is imprecise for
// x << 0, a libm tanh per element ~10x slower).
class GeluKernel : public Kernel {
 public:
  explicit GeluKernel(const KernelInfo& info)
      : tanh_form_(info.node.attr_string("approximate", "none") == "tanh"), generic_(info) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!tanh_form_ || !x || x->dtype() != DataType::kFloat) return generic_.Compute(ctx);
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, x->dims());
    const float* px = x->data<float>();
    float* py = y.data<float>();
    ParallelBlocks(x->numel(), [&](int64_t begin, int64_t end) {
      tanh_arrays::GeluTanh(px + begin, py + begin, end - begin);
    });
    return absl::OkStatus();
  }

 private:
  bool tanh_form_;
  UnaryKernel<GeluOp> generic_;
};

// IsNaN / IsInf: float input, bool output.
class FloatPredicate : public Kernel {
 public:
  explicit FloatPredicate(const KernelInfo& info)
      : is_nan_(info.node.op_type == "IsNaN"),
        pos_(info.node.attr_int("detect_positive", 1) != 0),
        neg_(info.node.attr_int("detect_negative", 1) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* xp = ctx.input(0);
    if (!xp) return absl::InvalidArgumentError("input 0 is missing");
    Tensor& y = ctx.AllocateOutput(0, DataType::kBool, xp->dims());
    bool done = false;
    VisitNumericType(xp->dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatLike<T>) {
        const T* x = xp->data<T>();
        bool* out = y.data<bool>();
        ParallelFor(xp->numel(), [&](int64_t i) {
          auto v = static_cast<ComputeT<T>>(x[i]);
          out[i] = is_nan_ ? std::isnan(v) : std::isinf(v) && (v > 0 ? pos_ : neg_);
        });
        done = true;
      }
    });
    return done ? absl::OkStatus() : TypeError("this op", xp->dtype());
  }

 private:
  bool is_nan_, pos_, neg_;
};

// Clip: bounds from attributes min/max (opset < 11) or optional scalar inputs 1 and 2.
class Clip : public Kernel {
 public:
  explicit Clip(const KernelInfo& info)
      : opset_(info.opset),
        attr_min_(info.node.attr_float("min", -std::numeric_limits<float>::max())),
        attr_max_(info.node.attr_float("max", std::numeric_limits<float>::max())) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* xp = ctx.input(0);
    if (!xp) return absl::InvalidArgumentError("input 0 is missing");
    const Tensor& x = *xp;
    for (int i = 1; i <= 2; ++i) {
      const Tensor* b = ctx.input(i);
      if (b && (b->numel() != 1 || b->dtype() != x.dtype()))
        return absl::InvalidArgumentError(
            std::string(i == 1 ? "min" : "max") + " (input " + std::to_string(i) +
            ") must be a single value of the input's type, got " + DataTypeName(b->dtype()) +
            DimsToString(b->dims()));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    const int64_t n = x.numel();
    if (n == 0) return absl::OkStatus();
    bool done = false;
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatLike<T> || kIsInt<T>) {
        using C = ComputeT<T>;
        C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
        if (opset_ < 11) {
          lo = static_cast<C>(attr_min_);
          hi = static_cast<C>(attr_max_);
        } else {
          if (const Tensor* b = ctx.input(1)) lo = static_cast<C>(b->data<T>()[0]);
          if (const Tensor* b = ctx.input(2)) hi = static_cast<C>(b->data<T>()[0]);
        }
        done = true;
        if constexpr (std::is_same_v<T, float>) {
          if (lo <= hi && dnnl_.Run(alg::eltwise_clip_v2, lo, hi, x, y)) return;
        }
        const T* in = x.data<T>();
        T* out = y.data<T>();
        ParallelFor(n, [&](int64_t i) {
          C v = static_cast<C>(in[i]);
          v = v < lo ? lo : v;  // numpy order: min(max(x, lo), hi); NaN passes through
          v = v > hi ? hi : v;
          out[i] = FromCompute<T>(v);
        });
      }
    });
    return done ? absl::OkStatus() : TypeError("Clip", x.dtype());
  }

 private:
  int opset_;
  float attr_min_, attr_max_;
  DnnlEltwise dnnl_;
};

void Add(KernelRegistry& r, const char* op, int since, int until,
         const std::vector<DataType>& types, KernelFactory f) {
  r.Add(op, since, until, types, std::move(f));
}

}  // namespace

void RegisterUnaryKernels(KernelRegistry& r) {
  using namespace types;
  const int M = kMaxOpset;
  const std::vector<DataType> kBool = {DataType::kBool};

  // Activations.
  Add(r, "Relu", 1, 13, kFloats, Make<UnaryKernel<ReluOp>>());
  Add(r, "Relu", 14, M, kSignedNumeric, Make<UnaryKernel<ReluOp>>());
  Add(r, "LeakyRelu", 1, M, kFloats, Make<UnaryKernel<LeakyReluOp>>());
  Add(r, "Elu", 1, M, kFloats, Make<UnaryKernel<EluOp>>());
  Add(r, "Selu", 1, M, kFloats, Make<UnaryKernel<SeluOp>>());
  Add(r, "Celu", 12, M, kFloats, Make<UnaryKernel<CeluOp>>());
  Add(r, "Sigmoid", 1, M, kFloats, Make<UnaryKernel<SigmoidOp>>());
  Add(r, "HardSigmoid", 1, M, kFloats, Make<UnaryKernel<HardSigmoidOp>>());
  Add(r, "HardSwish", 14, M, kFloats, Make<UnaryKernel<HardSwishOp>>());
  Add(r, "Tanh", 1, M, kFloats, Make<UnaryKernel<TanhOp>>());
  Add(r, "Softplus", 1, M, kFloats, Make<UnaryKernel<SoftplusOp>>());
  Add(r, "Softsign", 1, M, kFloats, Make<UnaryKernel<SoftsignOp>>());
  Add(r, "ThresholdedRelu", 10, M, kFloats, Make<UnaryKernel<ThresholdedReluOp>>());
  Add(r, "Shrink", 9, M, kNumeric, Make<UnaryKernel<ShrinkOp>>());
  Add(r, "Gelu", 20, M, kFloats, Make<GeluKernel>());
  r.Add(TandemKernel("Gelu", kFloats, Make<GeluKernel>()));  // optimizer/gelu_fusion.h
  Add(r, "Mish", 18, M, kFloats, Make<UnaryKernel<MishOp>>());
  Add(r, "Swish", 24, M, kFloats, Make<UnaryKernel<SwishOp>>());

  // Arithmetic and math functions.
  Add(r, "Abs", 1, 5, kFloats, Make<UnaryKernel<AbsOp>>());
  Add(r, "Abs", 6, M, kNumeric, Make<UnaryKernel<AbsOp>>());
  Add(r, "Neg", 1, 5, kFloats, Make<UnaryKernel<NegOp>>());
  Add(r, "Neg", 6, M, kSignedNumeric, Make<UnaryKernel<NegOp>>());
  Add(r, "Sign", 9, M, kNumeric, Make<UnaryKernel<SignOp>>());
  Add(r, "Exp", 1, M, kFloats, Make<UnaryKernel<ExpOp>>());
  Add(r, "Log", 1, M, kFloats, Make<UnaryKernel<LogOp>>());
  Add(r, "Sqrt", 1, M, kFloats, Make<UnaryKernel<SqrtOp>>());
  Add(r, "Reciprocal", 1, M, kFloats, Make<UnaryKernel<ReciprocalOp>>());
  Add(r, "Floor", 1, M, kFloats, Make<UnaryKernel<FloorOp>>());
  Add(r, "Ceil", 1, M, kFloats, Make<UnaryKernel<CeilOp>>());
  Add(r, "Round", 11, M, kFloats, Make<UnaryKernel<RoundOp>>());
  Add(r, "Erf", 9, M, kFloats, Make<UnaryKernel<ErfOp>>());
  Add(r, "Sin", 7, M, kFloats, Make<UnaryKernel<SinOp>>());
  Add(r, "Cos", 7, M, kFloats, Make<UnaryKernel<CosOp>>());
  Add(r, "Tan", 7, M, kFloats, Make<UnaryKernel<TanOp>>());
  Add(r, "Asin", 7, M, kFloats, Make<UnaryKernel<AsinOp>>());
  Add(r, "Acos", 7, M, kFloats, Make<UnaryKernel<AcosOp>>());
  Add(r, "Atan", 7, M, kFloats, Make<UnaryKernel<AtanOp>>());
  Add(r, "Sinh", 9, M, kFloats, Make<UnaryKernel<SinhOp>>());
  Add(r, "Cosh", 9, M, kFloats, Make<UnaryKernel<CoshOp>>());
  Add(r, "Asinh", 9, M, kFloats, Make<UnaryKernel<AsinhOp>>());
  Add(r, "Acosh", 9, M, kFloats, Make<UnaryKernel<AcoshOp>>());
  Add(r, "Atanh", 9, M, kFloats, Make<UnaryKernel<AtanhOp>>());

  // Predicates and logic.
  Add(r, "IsNaN", 9, M, kFloats, Make<FloatPredicate>());
  Add(r, "IsInf", 10, M, kFloats, Make<FloatPredicate>());
  Add(r, "Not", 1, M, kBool, Make<UnaryKernel<NotOp>>());
  Add(r, "BitwiseNot", 18, M, kIntegers, Make<UnaryKernel<BitwiseNotOp>>());

  // Clip: attributes until opset 10, optional inputs from 11, integer types from 12.
  Add(r, "Clip", 1, 10, kFloats, Make<Clip>());
  Add(r, "Clip", 11, 11, kFloats, Make<Clip>());
  Add(r, "Clip", 12, M, kNumeric, Make<Clip>());
}

}  // namespace tandem::cpu
