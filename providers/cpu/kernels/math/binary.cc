// Binary elementwise kernels with numpy broadcasting: arithmetic (Add, Sub, Mul, Div, Pow,
// Mod, PRelu), comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), logic
// (And, Or, Xor), bit ops (BitShift, BitwiseAnd/Or/Xor) and the ternary Where.
// float32 Add/Sub/Mul/Div use the oneDNN binary primitive when the second operand
// broadcasts onto the first; everything else runs reference loops over broadcast rows.
#include <cmath>
#include <limits>

#include "graph/numeric_cast.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

// Calls f(T{}) for numeric types, bool and std::string; false for other types.
template <typename F>
bool VisitAnyType(DataType t, F&& f) {
  if (t == DataType::kString) {
    f(std::string{});
    return true;
  }
  return VisitNumericType(t, f);
}

// Shapes of A and B (B possibly re-aligned for opset < 7) and the output shape.
struct BinaryShapes {
  Dims a, b, out;
};
absl::StatusOr<BinaryShapes> ResolveShapes(const LegacyBroadcast& legacy, const Tensor& a,
                                           const Tensor& b) {
  BinaryShapes s;
  s.a = a.dims();
  auto bd = legacy.BDims(a.dims(), b.dims());
  if (!bd.ok()) return bd.status();
  s.b = *bd;
  auto out = BroadcastShapes(s.a, s.b);
  if (!out.ok()) return out.status();
  s.out = *out;
  return s;
}

template <typename C>
C WrapNeg(C a) {
  using U = std::make_unsigned_t<C>;
  return static_cast<C>(U(0) - static_cast<U>(a));
}

// ---- Op descriptions: Supports<T>(), kBoolOut, operator()(a, b), dnnl algorithm --------

enum class Kind { kNumeric, kSignedOrFloat, kFloat, kInt, kUnsigned, kBool, kCompare, kEqual };
template <Kind K, typename T>
constexpr bool KindSupports() {
  switch (K) {
    case Kind::kNumeric: case Kind::kCompare: return kIsFloatLike<T> || kIsInt<T>;
    case Kind::kSignedOrFloat: return kIsFloatLike<T> || (kIsInt<T> && std::is_signed_v<T>);
    case Kind::kFloat: return kIsFloatLike<T>;
    case Kind::kInt: return kIsInt<T>;
    case Kind::kUnsigned: return kIsInt<T> && std::is_unsigned_v<T>;
    case Kind::kBool: return std::is_same_v<T, bool>;
    case Kind::kEqual:
      return kIsFloatLike<T> || kIsInt<T> || std::is_same_v<T, bool> ||
             std::is_same_v<T, std::string>;
  }
  return false;
}

template <Kind K, bool BoolOut = (K == Kind::kCompare || K == Kind::kEqual || K == Kind::kBool)>
struct OpBase {
  static constexpr Kind kKind = K;
  static constexpr bool kBoolOut = BoolOut;
  static constexpr bool kCommutative = false;
  template <typename T> static constexpr bool Supports() { return KindSupports<K, T>(); }
  std::optional<dnnl::algorithm> Dnnl() const { return std::nullopt; }
};

#define ARITH_OP(Name, K, expr, dnnl_alg, comm)                                         \
  struct Name : OpBase<K> {                                                             \
    static constexpr bool kCommutative = comm;                                          \
    explicit Name(const KernelInfo&) {}                                                 \
    template <typename C> C operator()(C a, C b) const { return static_cast<C>(expr); } \
    std::optional<dnnl::algorithm> Dnnl() const { return dnnl_alg; }                    \
  };
ARITH_OP(AddOp, Kind::kNumeric, a + b, dnnl::algorithm::binary_add, true)
ARITH_OP(SubOp, Kind::kNumeric, a - b, dnnl::algorithm::binary_sub, false)
ARITH_OP(MulOp, Kind::kNumeric, a * b, dnnl::algorithm::binary_mul, true)
ARITH_OP(BitAndOp, Kind::kInt, a & b, std::nullopt, true)
ARITH_OP(BitOrOp, Kind::kInt, a | b, std::nullopt, true)
ARITH_OP(BitXorOp, Kind::kInt, a ^ b, std::nullopt, true)
#undef ARITH_OP

struct DivOp : OpBase<Kind::kNumeric> {
  explicit DivOp(const KernelInfo&) {}
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;  // undefined in ONNX; avoid the trap
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return WrapNeg(a);
      return static_cast<C>(a / b);  // truncates toward zero like C
    } else {
      return a / b;
    }
  }
  std::optional<dnnl::algorithm> Dnnl() const { return dnnl::algorithm::binary_div; }
};

struct ModOp : OpBase<Kind::kNumeric> {
  bool fmod;
  explicit ModOp(const KernelInfo& info) : fmod(info.node.attr_int("fmod", 0) != 0) {}
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;
        C r = static_cast<C>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    } else {
      C r = std::fmod(a, b);
      if (fmod) return r;
      // A - floor(A / B) * B (floats allowed from opset 28): the sign of B, zero included.
      if (r == 0) return std::copysign(C(0), b);
      if ((r < 0) != (b < 0)) r += b;
      return r;
    }
  }
};

struct PReluOp : OpBase<Kind::kSignedOrFloat> {

  template <typename C> C operator()(C x, C slope) const {
    return x < C(0) ? static_cast<C>(x * slope) : x;
  }
};

#define CMP_OP(Name, K, expr)                                                      \
  struct Name : OpBase<K> {                                                        \
    explicit Name(const KernelInfo&) {}                                            \
    template <typename C> bool operator()(const C& a, const C& b) const { return expr; } \
  };
CMP_OP(EqualOp, Kind::kEqual, a == b)
CMP_OP(LessOp, Kind::kCompare, a < b)
CMP_OP(GreaterOp, Kind::kCompare, a > b)
CMP_OP(LessEqualOp, Kind::kCompare, a <= b)
CMP_OP(GreaterEqualOp, Kind::kCompare, a >= b)
CMP_OP(AndOp, Kind::kBool, a && b)
CMP_OP(OrOp, Kind::kBool, a || b)
CMP_OP(XorOp, Kind::kBool, a != b)
#undef CMP_OP

// Shifts past the width (or negative ones, signed types from opset 28) give 0, or -1 for a
// negative value shifted right; signed values shift right arithmetically and left as
// their unsigned bits.
struct BitShiftOp : OpBase<Kind::kInt> {
  bool left;
  explicit BitShiftOp(const KernelInfo& info)
      : left(info.node.attr_string("direction", "") == "LEFT") {}
  template <typename C> C operator()(C a, C b) const {
    using U = std::make_unsigned_t<C>;
    if (b < C(0) || static_cast<U>(b) >= sizeof(C) * 8) return !left && a < C(0) ? C(-1) : C(0);
    return left ? static_cast<C>(static_cast<U>(static_cast<U>(a) << b)) : static_cast<C>(a >> b);
  }
};

// ---- Kernels ---------------------------------------------------------------------------

absl::Status TypeError(const std::string& what, DataType t) {
  return absl::InvalidArgumentError(what + " does not support element type " + DataTypeName(t));
}

absl::Status CheckTwoInputs(const KernelContext& ctx) {
  if (!ctx.input(0) || !ctx.input(1))
    return absl::InvalidArgumentError("expects two inputs, input " +
                                      std::to_string(ctx.input(0) ? 1 : 0) + " is missing");
  if (ctx.input(0)->dtype() != ctx.input(1)->dtype())
    return absl::InvalidArgumentError(std::string("inputs have different element types ") +
                                      DataTypeName(ctx.input(0)->dtype()) + " and " +
                                      DataTypeName(ctx.input(1)->dtype()));
  return absl::OkStatus();
}

// out = op(a, b) in float32 where a has out's dims and b is a channel-blocked gate:
// out as [outer, middle, inner] and b as [outer, 1, inner] with inner > 1 (dims of size 1
// fit either side), e.g. a squeeze-and-excitation gate [N, C/B, 1, 1, B] scaling
// [N, C/B, H, W, B], where oneDNN has only its reference implementation on some ISAs.
// BroadcastBinary would call its row function once per B elements, 1.2-1.5x slower on
// these shapes; with inner 1 (the plain [N, C, 1, 1] gate) its rows are long and it is
// the faster one, so this declines. False for other shapes.
template <typename Op>
bool BroadcastBlockedGate(const Op& op, const Tensor& a, const Dims& b_dims, const Tensor& b, Tensor& out) {
  const Dims& od = out.dims();
  if (a.dims() != od || b_dims.size() > od.size()) return false;
  Dims bd(od.size() - b_dims.size(), 1);
  bd.insert(bd.end(), b_dims.begin(), b_dims.end());
  int64_t outer = 1, middle = 1, inner = 1;
  int part = 0;  // 0: leading dims b has, 1: the middle ones it broadcasts over, 2: trailing dims it has
  for (size_t i = 0; i < od.size(); ++i) {
    if (od[i] == 1) continue;
    const bool broadcast = bd[i] == 1;
    if (!broadcast && bd[i] != od[i]) return false;
    if (broadcast && part == 2) return false;  // a second broadcast run
    if (broadcast) part = 1;
    else if (part == 1) part = 2;
    (part == 0 ? outer : part == 1 ? middle : inner) *= od[i];
  }
  if (middle == 1 || inner == 1) return false;
  const float* x = a.data<float>();
  const float* s = b.data<float>();
  float* y = out.data<float>();
  ParallelForIf(out.numel() >= (int64_t{1} << 15), outer * middle, [&](int64_t row) {
    const float* gate = s + row / middle * inner;
    const int64_t at = row * inner;
    for (int64_t i = 0; i < inner; ++i) y[at + i] = op(x[at + i], gate[i]);
  });
  return true;
}

template <typename Op>
class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const KernelInfo& info)
      : legacy_(info.node, info.opset), op_(info) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (auto st = CheckTwoInputs(ctx); !st.ok()) return st;
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    auto shapes = ResolveShapes(legacy_, a, b);
    if (!shapes.ok()) return shapes.status();
    const DataType out_type = Op::kBoolOut ? DataType::kBool : a.dtype();
    Tensor& out = ctx.AllocateOutput(0, out_type, shapes->out);
    if (out.numel() == 0) return absl::OkStatus();
    if constexpr (!Op::kBoolOut) {
      if (auto alg = op_.Dnnl(); alg && a.dtype() == DataType::kFloat) {
        if (dnnl_.Run(*alg, a, shapes->b, b, out)) return absl::OkStatus();
        if (Op::kCommutative && dnnl_.Run(*alg, b, shapes->a, a, out)) return absl::OkStatus();
        if constexpr (Op::template Supports<float>()) {
          if (BroadcastBlockedGate(op_, a, shapes->b, b, out)) return absl::OkStatus();
          if (Op::kCommutative && BroadcastBlockedGate(op_, b, shapes->a, a, out)) return absl::OkStatus();
        }
      }
    }
    bool done = false;
    VisitAnyType(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (Op::template Supports<T>()) {
        using TO = std::conditional_t<Op::kBoolOut, bool, T>;
        BroadcastBinary<T, T, TO>(a, shapes->a, b, shapes->b, out, op_);
        done = true;
      }
    });
    return done ? absl::OkStatus() : TypeError("this op", a.dtype());
  }

 private:
  LegacyBroadcast legacy_;
  Op op_;
  DnnlBinary dnnl_;
};

// PRelu: slope broadcasts onto X (unidirectionally). Before opset 7 a 1-D slope whose
// length is X's channel count (dim 1) is per channel.
class PRelu : public Kernel {
 public:
  explicit PRelu(const KernelInfo& info) : opset_(info.opset) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (auto st = CheckTwoInputs(ctx); !st.ok()) return st;
    const Tensor& x = *ctx.input(0);
    const Tensor& slope = *ctx.input(1);
    Dims sd = slope.dims();
    if (opset_ < 7 && sd.size() == 1 && x.rank() >= 2 && sd[0] == x.dim(1) && sd[0] != 1)
      sd.resize(x.rank() - 1, 1);
    auto out_dims = BroadcastShapes(x.dims(), sd);
    if (!out_dims.ok() || *out_dims != x.dims())
      return absl::InvalidArgumentError("slope of shape " + DimsToString(slope.dims()) +
                                        " does not broadcast to X of shape " +
                                        DimsToString(x.dims()));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    bool done = false;
    PReluOp op;
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (PReluOp::Supports<T>()) {
        BroadcastBinary<T, T, T>(x, x.dims(), slope, sd, y, op);
        done = true;
      }
    });
    return done ? absl::OkStatus() : TypeError("PRelu", x.dtype());
  }

 private:
  int opset_;
};

// Pow: base type T (output type) and exponent type T1 may differ.
class Pow : public Kernel {
 public:
  explicit Pow(const KernelInfo& info) : legacy_(info.node, info.opset) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!ctx.input(0) || !ctx.input(1))
      return absl::InvalidArgumentError("expects two inputs (base and exponent)");
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    auto shapes = ResolveShapes(legacy_, a, b);
    if (!shapes.ok()) return shapes.status();
    Tensor& out = ctx.AllocateOutput(0, a.dtype(), shapes->out);
    if (out.numel() == 0) return absl::OkStatus();
    // float32 to a single float32 exponent: products for 2, 3 and 4 (GELU's tanh form
    // cubes its input; oneDNN's general pow takes ~10x as long), else oneDNN eltwise pow
    // (alpha * x^beta).
    if (a.dtype() == DataType::kFloat && b.dtype() == DataType::kFloat && b.numel() == 1 &&
        out.dims() == a.dims()) {
      const float e = b.data<float>()[0];
      if (e == 2.f || e == 3.f || e == 4.f) {
        SmallIntegerPower(a.data<float>(), static_cast<int>(e), out.data<float>(), out.numel());
        return absl::OkStatus();
      }
      if (dnnl_.Run(dnnl::algorithm::eltwise_pow, 1.f, e, a, out)) return absl::OkStatus();
    }
    bool done = false;
    VisitNumericType(a.dtype(), [&](auto ta) {
      using T = decltype(ta);
      if constexpr (kIsFloatLike<T> || kIsInt<T>) {
        VisitNumericType(b.dtype(), [&](auto tb) {
          using T1 = decltype(tb);
          if constexpr (kIsFloatLike<T1> || kIsInt<T1>) {
            BroadcastBinary<T, T1, T>(a, shapes->a, b, shapes->b, out,
                                      [](auto x, auto y) { return Power<T>(x, y); });
            done = true;
          }
        });
      }
    });
    return done ? absl::OkStatus()
                : absl::InvalidArgumentError(std::string("Pow does not support base type ") +
                                             DataTypeName(a.dtype()) + " with exponent type " +
                                             DataTypeName(b.dtype()));
  }

 private:
  // y = x^e for e in {2, 3, 4}, as products rounded like x*x, (x*x)*x and (x*x)*(x*x).
  static void SmallIntegerPower(const float* x, int e, float* y, int64_t n) {
    ParallelBlocks(n, [&](int64_t begin, int64_t end) {
      if (e == 2) {
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] * x[i];
      } else if (e == 3) {
        for (int64_t i = begin; i < end; ++i) y[i] = x[i] * x[i] * x[i];
      } else {
        for (int64_t i = begin; i < end; ++i) y[i] = (x[i] * x[i]) * (x[i] * x[i]);
      }
    });
  }

  template <typename T, typename CA, typename CB>
  static auto Power(CA x, CB y) {
    if constexpr (kIsInt<T> && std::is_integral_v<CB>) {
      // Exact integer power by squaring (wrapping like numpy).
      using U = std::make_unsigned_t<T>;
      if (y < 0) {
        if (x == 1) return T(1);
        if constexpr (std::is_signed_v<T>)
          if (x == -1) return T((y % 2) ? -1 : 1);
        return T(0);
      }
      U base = static_cast<U>(x), result = 1;
      for (uint64_t e = static_cast<uint64_t>(y); e; e >>= 1) {
        if (e & 1) result = static_cast<U>(result * base);
        base = static_cast<U>(base * base);
      }
      return static_cast<T>(result);
    } else if constexpr (std::is_same_v<CA, float> && std::is_same_v<CB, float>) {
      return NumericCast<ComputeT<T>>(std::pow(x, y));
    } else {
      return NumericCast<ComputeT<T>>(std::pow(static_cast<double>(x), static_cast<double>(y)));
    }
  }

  LegacyBroadcast legacy_;
  DnnlEltwise dnnl_;
};

// Where(condition, X, Y): three-way broadcast; the type is X's (input 1).
class Where : public Kernel {
 public:
  explicit Where(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* c = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* y = ctx.input(2);
    if (!c || !x || !y) return absl::InvalidArgumentError("expects three inputs");
    if (c->dtype() != DataType::kBool)
      return absl::InvalidArgumentError(std::string("condition must be bool, got ") +
                                        DataTypeName(c->dtype()));
    if (x->dtype() != y->dtype())
      return absl::InvalidArgumentError(std::string("X and Y have different element types ") +
                                        DataTypeName(x->dtype()) + " and " +
                                        DataTypeName(y->dtype()));
    auto out_dims = BroadcastShapes({c->dims(), x->dims(), y->dims()});
    if (!out_dims.ok()) return out_dims.status();
    Tensor& out = ctx.AllocateOutput(0, x->dtype(), *out_dims);
    if (out.numel() == 0) return absl::OkStatus();
    BroadcastRows rows(*out_dims, {c->dims(), x->dims(), y->dims()});
    const auto& st = rows.steps();
    bool done = VisitAnyType(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const bool* pc = c->data<bool>();
      const T* px = x->data<T>();
      const T* py = y->data<T>();
      T* po = out.data<T>();
      rows.Run([&](int64_t o, const int64_t* off, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          po[o + i] = pc[off[0] + i * st[0]] ? px[off[1] + i * st[1]] : py[off[2] + i * st[2]];
      });
    });
    return done ? absl::OkStatus() : TypeError("Where", x->dtype());
  }
};

}  // namespace

void RegisterBinaryKernels(KernelRegistry& r) {
  using namespace types;
  const int M = kMaxOpset;
  const std::vector<DataType> kBool = {DataType::kBool};
  const std::vector<DataType> kUnsigned = {DataType::kUint8, DataType::kUint16,
                                           DataType::kUint32, DataType::kUint64};
  std::vector<DataType> numeric_bool = kNumeric;
  numeric_bool.push_back(DataType::kBool);
  std::vector<DataType> numeric_bool_string = numeric_bool;
  numeric_bool_string.push_back(DataType::kString);

  // Arithmetic: opsets 1-6 broadcast only via the `broadcast`/`axis` attributes.
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    KernelFactory f = std::string(op) == "Add"   ? Make<BinaryKernel<AddOp>>()
                      : std::string(op) == "Sub" ? Make<BinaryKernel<SubOp>>()
                      : std::string(op) == "Mul" ? Make<BinaryKernel<MulOp>>()
                                                 : Make<BinaryKernel<DivOp>>();
    r.Add(op, 1, 6, kNumeric, f);
    r.Add(op, 7, M, kNumeric, f);
  }
  r.Add("Pow", 1, 6, kFloats, Make<Pow>());
  r.Add("Pow", 7, M, kNumeric, Make<Pow>());
  r.Add("Mod", 10, M, kNumeric, Make<BinaryKernel<ModOp>>());
  r.Add("PRelu", 1, 6, kFloats, Make<PRelu>());
  r.Add("PRelu", 7, M, kSignedNumeric, Make<PRelu>());

  // Comparisons (bool output).
  r.Add("Equal", 1, 6, numeric_bool, Make<BinaryKernel<EqualOp>>());
  r.Add("Equal", 7, M, numeric_bool_string, Make<BinaryKernel<EqualOp>>());
  r.Add("Less", 1, 6, kNumeric, Make<BinaryKernel<LessOp>>());
  r.Add("Less", 7, M, kNumeric, Make<BinaryKernel<LessOp>>());
  r.Add("Greater", 1, 6, kNumeric, Make<BinaryKernel<GreaterOp>>());
  r.Add("Greater", 7, M, kNumeric, Make<BinaryKernel<GreaterOp>>());
  r.Add("LessOrEqual", 12, M, kNumeric, Make<BinaryKernel<LessEqualOp>>());
  r.Add("GreaterOrEqual", 12, M, kNumeric, Make<BinaryKernel<GreaterEqualOp>>());

  // Logic and bits.
  r.Add("And", 1, 6, kBool, Make<BinaryKernel<AndOp>>());
  r.Add("And", 7, M, kBool, Make<BinaryKernel<AndOp>>());
  r.Add("Or", 1, 6, kBool, Make<BinaryKernel<OrOp>>());
  r.Add("Or", 7, M, kBool, Make<BinaryKernel<OrOp>>());
  r.Add("Xor", 1, 6, kBool, Make<BinaryKernel<XorOp>>());
  r.Add("Xor", 7, M, kBool, Make<BinaryKernel<XorOp>>());
  r.Add("BitShift", 11, 27, kUnsigned, Make<BinaryKernel<BitShiftOp>>());
  r.Add("BitShift", 28, M, kIntegers, Make<BinaryKernel<BitShiftOp>>());
  r.Add("BitwiseAnd", 18, M, kIntegers, Make<BinaryKernel<BitAndOp>>());
  r.Add("BitwiseOr", 18, M, kIntegers, Make<BinaryKernel<BitOrOp>>());
  r.Add("BitwiseXor", 18, M, kIntegers, Make<BinaryKernel<BitXorOp>>());

  // Where keys on X (input 1).
  r.Add("Where", 9, M, kAll, Make<Where>(), 1);
}

}  // namespace tandem::cpu
