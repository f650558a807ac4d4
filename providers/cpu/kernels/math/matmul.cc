// MatMul (numpy semantics: 1-D operands, batch broadcasting) and Gemm, plus
// FusedMatMul / FusedGemm (ai.tandem, from optimizer/activation_fusion.h): the same with an activation.
// float32 (and float16/bfloat16 through float32) run on the oneDNN matmul primitive,
// cached per input shape (Gemm's large untransposed products with a changing B on oneDNN's
// sgemm, faster there); float32 products of a few thousand multiply-adds use direct
// loops instead (small_gemm.h), and products of a few rows with constant 2-D weights
// stream prepacked weights (skinny_gemm.h); other constant 2-D weights are reordered once into
// the layout oneDNN's matmul picks (packed_matmul_weights.h). Double and integer types use
// reference loops.
#include <algorithm>
#include <cstring>

#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/math/matmul_shape.h"
#include "providers/cpu/kernels/math/packed_matmul_weights.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/fused_activation.h"
#include "providers/cpu/microkernels/skinny_gemm.h"
#include "providers/cpu/microkernels/small_gemm.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBfloat16; }

// Copies a float tensor into `out` converting to its element type (half types).
void StoreFromFloat(const Tensor& src, Tensor& out) {
  const float* s = src.data<float>();
  const int64_t n = out.numel();
  if (out.dtype() == DataType::kFloat16) {
    for (int64_t i = 0; i < n; ++i) out.data<Float16>()[i] = Float16(s[i]);
  } else if (out.dtype() == DataType::kBfloat16) {
    for (int64_t i = 0; i < n; ++i) out.data<BFloat16>()[i] = BFloat16(s[i]);
  } else {
    std::memcpy(out.raw(), src.raw(), out.bytes());
  }
}

absl::Status DnnlError(const char* what, const dnnl::error& e) {
  return absl::InternalError(std::string("oneDNN ") + what + " failed: " + e.what());
}

// Accumulator for reference products: wrap-around unsigned arithmetic for integers.
template <typename T> struct RefAcc { using type = T; };
template <> struct RefAcc<int32_t> { using type = uint64_t; };
template <> struct RefAcc<int64_t> { using type = uint64_t; };
template <> struct RefAcc<uint32_t> { using type = uint64_t; };
template <> struct RefAcc<uint64_t> { using type = uint64_t; };

// ---------------------------------------------------------------------------------------
// MatMul

template <typename T>
void MatMulRef(const T* a, const T* b, T* y, const MatMulShape& s) {
  using A = typename RefAcc<T>::type;
  auto as = BroadcastStrides(s.a_batch, s.batch), bs = BroadcastStrides(s.b_batch, s.batch);
  const int64_t mk = s.m * s.k, kn = s.k * s.n, mn = s.m * s.n;
  std::vector<A> row(s.n);
  ForEachBroadcast(s.batch, {as, bs}, [&](int64_t o, const std::vector<int64_t>& off) {
    const T* pa = a + off[0] * mk;
    const T* pb = b + off[1] * kn;
    T* py = y + o * mn;
    for (int64_t i = 0; i < s.m; ++i) {
      std::fill(row.begin(), row.end(), A(0));
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const A av = static_cast<A>(pa[i * s.k + kk]);
        const T* pbr = pb + kk * s.n;
        for (int64_t j = 0; j < s.n; ++j) row[j] += av * static_cast<A>(pbr[j]);
      }
      for (int64_t j = 0; j < s.n; ++j) py[i * s.n + j] = static_cast<T>(row[j]);
    }
  });
}

// A matrix product's arguments: A, B (or its prepacked copy), Y and an optional bias.
void BindProductArgs(BoundArgs& args, const dnnl::memory::desc& a_md, const dnnl::memory::desc& b_md,
                     const dnnl::memory& b_packed, const dnnl::memory::desc& y_md,
                     const dnnl::memory::desc* bias_md) {
  args.Bind(DNNL_ARG_SRC, a_md);
  if (b_packed) args.Fix(DNNL_ARG_WEIGHTS, b_packed);
  else args.Bind(DNNL_ARG_WEIGHTS, b_md);
  args.Bind(DNNL_ARG_DST, y_md);
  if (bias_md) args.Bind(DNNL_ARG_BIAS, *bias_md);
}
// Points them at one call's tensors (b null: B is prepacked).
void PointProductArgs(BoundArgs& args, const Tensor& a, const Tensor* b, Tensor& y, const Tensor* bias) {
  args.Point(DNNL_ARG_SRC, a.raw());
  if (b) args.Point(DNNL_ARG_WEIGHTS, b->raw());
  args.Point(DNNL_ARG_DST, y.raw());
  if (bias) args.Point(DNNL_ARG_BIAS, bias->raw());
}

// A cached float32 oneDNN matmul for one pair of input shapes.
struct MatMulEntry {
  dnnl::matmul prim;
  dnnl::memory::desc a_md, b_md, y_md, bias_md;
  dnnl::memory::desc b_wanted;  // the primitive's weights layout
  dnnl::memory b_packed;        // constant B in that layout (packed_matmul_weights.h), or null
  BoundArgs args;               // SRC, WEIGHTS (b_packed, else B's), DST [, BIAS]
};

// With b_any (B one constant matrix) oneDNN picks B's layout (b_wanted); else B as stored.
MatMulEntry BuildMatMul(const MatMulShape& s, const dnnl::primitive_attr& attr, bool bias, bool b_any) {
  MatMulEntry e;
  const bool b_has_batch = NumElements(s.b_batch) > 1;
  if (!b_has_batch) {
    // B is one matrix: fold A's batch into its rows (one large 2-D product).
    const int64_t rows = NumElements(s.a_batch) * s.m;
    e.a_md = PlainDesc({rows, s.k}, dt::f32);
    e.b_md = PlainDesc({s.k, s.n}, dt::f32);
    e.y_md = PlainDesc({rows, s.n}, dt::f32);
  } else {
    const size_t r = s.batch.size() + 2;
    auto padded = [&](const Dims& batch, int64_t d0, int64_t d1) {
      Dims d(r - 2 - batch.size(), 1);
      d.insert(d.end(), batch.begin(), batch.end());
      d.push_back(d0);
      d.push_back(d1);
      return d;
    };
    e.a_md = PlainDesc(padded(s.a_batch, s.m, s.k), dt::f32);
    e.b_md = PlainDesc(padded(s.b_batch, s.k, s.n), dt::f32);
    e.y_md = PlainDesc(padded(s.batch, s.m, s.n), dt::f32);
  }
  if (bias) {  // a row vector [1, n] broadcast over every row of Y (padded to Y's rank)
    Dims bd(e.y_md.dims().size(), 1);
    bd.back() = s.n;
    e.bias_md = PlainDesc(bd, dt::f32);
  }
  const dnnl::memory::desc b_md = b_any ? AnyLayout(e.b_md) : e.b_md;
  auto d = bias ? dnnl::matmul::desc(e.a_md, b_md, e.bias_md, e.y_md) : dnnl::matmul::desc(e.a_md, b_md, e.y_md);
  const dnnl::matmul::primitive_desc pd(d, attr, DnnlEngine());
  e.prim = dnnl::matmul(pd);
  e.b_wanted = pd.weights_desc();
  return e;
}

// Writes C (dims cdims: [1 or m, 1 or n]) broadcast to [m, n] into y (as T): Gemm's C, and
// a MatMul bias as cdims {1, n}.
template <typename T>
void FillC(const Tensor& c, const Dims& cdims, T* y, int64_t m, int64_t n) {
  const T* pc = c.data<T>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      y[i * n + j] = pc[(cdims[0] == 1 ? 0 : i * cdims[1]) + (cdims[1] == 1 ? 0 : j)];
}

// Y[..., j] += bias[j] over every row of Y (after a product that overwrote Y).
void AddBiasRows(const float* bias, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) y[r * n + j] += bias[j];
}

// MatMul, and FusedMatMul (ai.tandem): a MatMul with an activation applied to its output
// and, from the CPU's MatMul+bias rewrite (providers/cpu/rewrites/matmul_bias.h), an optional
// input 2: a float32 bias [N] added to every row before the activation (B one matrix).
class MatMul : public Kernel {
 public:
  explicit MatMul(const KernelInfo& info) : act_(info.node), b_constant_(info.constant_input(1) != nullptr) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (a.dtype() != b.dtype())
      return absl::InvalidArgumentError("A and B have different element types");
    auto shape = MatMulShapes(a.dims(), b.dims());
    if (!shape.ok()) return shape.status();
    const MatMulShape& s = *shape;
    if (bias && (a.dtype() != DataType::kFloat || bias->dtype() != DataType::kFloat ||
                 b.rank() != 2 || bias->dims() != Dims{s.n}))
      return absl::InvalidArgumentError("a bias needs float32 A, a 2-D B and a bias of shape [" +
                                        std::to_string(s.n) + "], got " + DataTypeName(a.dtype()) +
                                        " A, B " + DimsToString(b.dims()) + ", bias " +
                                        DimsToString(bias->dims()));
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), s.out);
    if (y.numel() == 0) return absl::OkStatus();
    const int64_t rows = NumElements(s.a_batch) * s.m;  // when B is one matrix
    if (s.k == 0) {
      if (bias) FillC(*bias, {1, s.n}, y.data<float>(), rows, s.n);
      else std::memset(y.raw(), 0, y.bytes());
      if (a.dtype() == DataType::kFloat) act_.Apply(y.data<float>(), y.numel());
      return absl::OkStatus();
    }
    const bool dnnl_ok = s.batch.size() + 2 <= DNNL_MAX_NDIMS;
    if (a.dtype() == DataType::kFloat && NumElements(s.b_batch) <= 1 &&
        IsSmallGemm(rows, s.k, s.n)) {
      float* py = y.data<float>();
      if (bias) FillC(*bias, {1, s.n}, py, rows, s.n);
      else std::fill(py, py + y.numel(), 0.f);
      SmallGemmAccumulate(a.data<float>(), false, b.data<float>(), py, rows, s.k, s.n, 1.f);
      act_.Apply(py, y.numel());
      return absl::OkStatus();
    }
    if (a.dtype() == DataType::kFloat && b_constant_ && b.rank() == 2 && skinny::IsSkinny(rows, s.k, s.n)) {
      float* py = y.data<float>();  // a few rows against constant weights (skinny_gemm.h)
      packed_.Get(b, false, s.k, s.n)
          .Multiply(a.data<float>(), static_cast<int>(rows), 1.f, bias ? bias->data<float>() : nullptr, 1.f, py,
                    ctx.num_threads());
      act_.Apply(py, y.numel());
      return absl::OkStatus();
    }
    if (a.dtype() == DataType::kFloat && dnnl_ok) return RunDnnl(a, b, bias, y, s);
    if (IsHalf(a.dtype()) && dnnl_ok) {
      Tensor af = a.CastTo(DataType::kFloat), bf = b.CastTo(DataType::kFloat);
      Tensor yf = Tensor::Host(DataType::kFloat, s.out);
      auto st = RunDnnl(af, bf, nullptr, yf, s);
      if (!st.ok()) return st;
      StoreFromFloat(yf, y);
      return absl::OkStatus();
    }
    switch (a.dtype()) {
      case DataType::kFloat:
        MatMulRef(a.data<float>(), b.data<float>(), y.data<float>(), s);
        if (bias) AddBiasRows(bias->data<float>(), y.data<float>(), rows, s.n);
        act_.Apply(y.data<float>(), y.numel());
        break;
      case DataType::kDouble: MatMulRef(a.data<double>(), b.data<double>(), y.data<double>(), s); break;
      case DataType::kInt32: MatMulRef(a.data<int32_t>(), b.data<int32_t>(), y.data<int32_t>(), s); break;
      case DataType::kInt64: MatMulRef(a.data<int64_t>(), b.data<int64_t>(), y.data<int64_t>(), s); break;
      case DataType::kUint32: MatMulRef(a.data<uint32_t>(), b.data<uint32_t>(), y.data<uint32_t>(), s); break;
      case DataType::kUint64: MatMulRef(a.data<uint64_t>(), b.data<uint64_t>(), y.data<uint64_t>(), s); break;
      default:
        return absl::InvalidArgumentError(std::string("unsupported element type ") +
                                          DataTypeName(a.dtype()));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status RunDnnl(const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& y,
                       const MatMulShape& s) {
    try {
      MatMulEntry& e = cache_.Get({a.dims(), b.dims()}, [&] {
        const bool pack = b_constant_ && b.rank() == 2 && b.dtype() == DataType::kFloat && PackMatMulWeights(s.k, s.n);
        MatMulEntry built = BuildMatMul(s, act_.Attr(), bias != nullptr, pack);
        if (pack) built.b_packed = packed_b_.Get(b, built.b_md, built.b_wanted);
        BindProductArgs(built.args, built.a_md, built.b_md, built.b_packed, built.y_md, bias ? &built.bias_md : nullptr);
        return built;
      });
      PointProductArgs(e.args, a, e.b_packed ? nullptr : &b, y, bias);
      e.prim.execute(DnnlStream(), e.args.map());
      DnnlStream().wait();
    } catch (const dnnl::error& err) {
      return DnnlError("matmul", err);
    }
    return absl::OkStatus();
  }

  FusedActivation act_;
  bool b_constant_;                   // B is an initializer
  skinny::LazyPackedWeights packed_;  // and packed for the skinny path
  PackedMatMulWeights packed_b_;      // and for oneDNN's
  ShapeCache<MatMulEntry> cache_;
};

// ---------------------------------------------------------------------------------------
// Gemm: Y = alpha * A' * B' + beta * C, C unidirectionally broadcast to [M, N].

struct GemmEntry {
  dnnl::matmul prim;
  dnnl::memory::desc a_md, b_md, y_md, bias_md;
  bool use_bias = false;  // C passed as oneDNN bias (alpha == beta == 1, C is [N]/[1,N])
  bool use_sum = false;   // Y prefilled with C, added by a sum post-op scaled by beta
  dnnl::memory b_packed;  // constant B in the primitive's layout (packed_matmul_weights.h), or null
  BoundArgs args;         // SRC, WEIGHTS (b_packed, else B's), DST [, BIAS with use_bias]
};

// Gemm, and FusedGemm (ai.tandem): a Gemm with an activation applied to its output.
class Gemm : public Kernel {
 public:
  explicit Gemm(const KernelInfo& info)
      : act_(info.node),
        b_constant_(info.constant_input(1) != nullptr),
        trans_a_(info.node.attr_int("transA", 0) != 0),
        trans_b_(info.node.attr_int("transB", 0) != 0),
        alpha_(info.node.attr_float("alpha", 1.f)),
        beta_(info.node.attr_float("beta", 1.f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* c = ctx.input(2);
    if (a.rank() != 2 || b.rank() != 2)
      return absl::InvalidArgumentError("A and B must be 2-D, got " + DimsToString(a.dims()) +
                                        " and " + DimsToString(b.dims()));
    if (a.dtype() != b.dtype() || (c && c->dtype() != a.dtype()))
      return absl::InvalidArgumentError("A, B and C must have the same element type");
    const int64_t m = trans_a_ ? a.dim(1) : a.dim(0), k = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t k2 = trans_b_ ? b.dim(1) : b.dim(0), n = trans_b_ ? b.dim(0) : b.dim(1);
    if (k != k2)
      return absl::InvalidArgumentError("inner dimensions differ: A' is [" + std::to_string(m) +
                                        "," + std::to_string(k) + "], B' is [" +
                                        std::to_string(k2) + "," + std::to_string(n) + "]");
    Dims cdims;
    if (c) {
      if (c->rank() > 2)
        return absl::InvalidArgumentError("C must have rank <= 2, got " + DimsToString(c->dims()));
      cdims = c->dims();
      while (cdims.size() < 2) cdims.insert(cdims.begin(), 1);
      if ((cdims[0] != 1 && cdims[0] != m) || (cdims[1] != 1 && cdims[1] != n))
        return absl::InvalidArgumentError("C of shape " + DimsToString(c->dims()) +
                                          " cannot be broadcast to [" + std::to_string(m) + "," +
                                          std::to_string(n) + "]");
    }
    if (beta_ == 0.f) c = nullptr;
    Tensor& y = ctx.AllocateOutput(0, a.dtype(), {m, n});
    if (y.numel() == 0) return absl::OkStatus();
    const DataType t = a.dtype();
    if (t == DataType::kFloat && IsSmallGemm(m, k, n)) return RunSmall(a, b, c, cdims, y, m, k, n);
    if (t == DataType::kFloat && b_constant_ && !trans_a_ && skinny::IsSkinny(m, k, n) &&
        (!c || (cdims[0] == 1 && cdims[1] == n)))
      return RunSkinny(a, b, c, y, m, k, n, ctx.num_threads());
    if (t == DataType::kFloat && UseSgemm(m, k, n)) return RunSgemm(a, b, c, cdims, y, m, k, n);
    if (t == DataType::kFloat) return RunDnnl(a, b, c, cdims, y, m, k, n);
    if (IsHalf(t)) {
      Tensor af = a.CastTo(DataType::kFloat), bf = b.CastTo(DataType::kFloat), cf;
      if (c) cf = c->CastTo(DataType::kFloat);
      Tensor yf = Tensor::Host(DataType::kFloat, {m, n});
      auto st = RunDnnl(af, bf, c ? &cf : nullptr, cdims, yf, m, k, n);
      if (!st.ok()) return st;
      StoreFromFloat(yf, y);
      return absl::OkStatus();
    }
    switch (t) {
      case DataType::kDouble: return Ref<double>(a, b, c, cdims, y, m, k, n);
      case DataType::kInt32: return Ref<int32_t>(a, b, c, cdims, y, m, k, n);
      case DataType::kInt64: return Ref<int64_t>(a, b, c, cdims, y, m, k, n);
      case DataType::kUint32: return Ref<uint32_t>(a, b, c, cdims, y, m, k, n);
      case DataType::kUint64: return Ref<uint64_t>(a, b, c, cdims, y, m, k, n);
      default:
        return absl::InvalidArgumentError(std::string("unsupported element type ") +
                                          DataTypeName(t));
    }
  }

 private:
  // Small float products (small_gemm.h); a transposed constant B is transposed once.
  absl::Status RunSmall(const Tensor& a, const Tensor& b, const Tensor* c, const Dims& cdims,
                        Tensor& y, int64_t m, int64_t k, int64_t n) {
    float* py = y.data<float>();
    if (c) {
      FillC(*c, cdims, py, m, n);
      if (beta_ != 1.f)
        for (int64_t i = 0; i < m * n; ++i) py[i] *= beta_;
    } else {
      std::fill(py, py + m * n, 0.f);
    }
    const float* pb = b.data<float>();
    if (trans_b_) {
      if (!(b_constant_ && bt_ready_)) TransposeInto(pb, n, k, bt_);
      bt_ready_ = b_constant_;
      pb = bt_.data();
    }
    SmallGemmAccumulate(a.data<float>(), trans_a_, pb, py, m, k, n, alpha_);
    act_.Apply(py, m * n);
    return absl::OkStatus();
  }

  // A few rows against constant weights (skinny_gemm.h), packed on first use; C, when
  // given, is one row of n.
  absl::Status RunSkinny(const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y, int64_t m, int64_t k,
                         int64_t n, int threads) {
    float* py = y.data<float>();
    packed_.Get(b, trans_b_, k, n)
        .Multiply(a.data<float>(), static_cast<int>(m), alpha_, c ? c->data<float>() : nullptr, beta_, py, threads);
    act_.Apply(py, m * n);
    return absl::OkStatus();
  }

  // oneDNN's sgemm for a large product of two untransposed operands whose B changes from run
  // to run (a training step's dX = dY W): on two AVX-512 cores ~13% faster than the matmul
  // primitive for transformer layers' products (1024 x 384 x 1536, cold caches: 3.4 vs
  // 3.9 ms), as fast with AVX2. A constant B stays with the primitive and its packed weights.
  bool UseSgemm(int64_t m, int64_t k, int64_t n) const {
    return !trans_a_ && !trans_b_ && !b_constant_ && m * k * n >= (int64_t{1} << 21);
  }

  absl::Status RunSgemm(const Tensor& a, const Tensor& b, const Tensor* c, const Dims& cdims, Tensor& y,
                        int64_t m, int64_t k, int64_t n) {
    float* py = y.data<float>();
    if (c) FillC(*c, cdims, py, m, n);
    auto st = Sgemm('N', 'N', m, n, k, alpha_, a.data<float>(), k, b.data<float>(), n, c ? beta_ : 0.f, py, n);
    if (!st.ok()) return st;
    act_.Apply(py, m * n);
    return absl::OkStatus();
  }

  absl::Status RunDnnl(const Tensor& a, const Tensor& b, const Tensor* c, const Dims& cdims,
                       Tensor& y, int64_t m, int64_t k, int64_t n) {
    try {
      Dims ckey = c ? cdims : Dims{-1};
      GemmEntry& e = cache_.Get({a.dims(), b.dims(), ckey}, [&] {
        GemmEntry g;
        g.a_md = trans_a_ ? dnnl::memory::desc({m, k}, dt::f32, {1, m})
                          : dnnl::memory::desc({m, k}, dt::f32, {k, 1});
        g.b_md = trans_b_ ? dnnl::memory::desc({k, n}, dt::f32, {1, k})
                          : dnnl::memory::desc({k, n}, dt::f32, {n, 1});
        g.y_md = PlainDesc({m, n}, dt::f32);
        dnnl::primitive_attr attr;
        if (alpha_ != 1.f) attr.set_output_scales(0, {alpha_});
        if (c && alpha_ == 1.f && beta_ == 1.f && cdims[0] == 1) {
          g.use_bias = true;
          g.bias_md = PlainDesc({1, cdims[1]}, dt::f32);
        }
        dnnl::post_ops po;
        if (c && !g.use_bias) {
          g.use_sum = true;
          po.append_sum(beta_);
        }
        act_.AppendTo(po);
        attr.set_post_ops(po);
        const bool pack = b_constant_ && k > 0 && PackMatMulWeights(k, n);
        const dnnl::memory::desc b_md = pack ? AnyLayout(g.b_md) : g.b_md;
        auto d = g.use_bias ? dnnl::matmul::desc(g.a_md, b_md, g.bias_md, g.y_md)
                            : dnnl::matmul::desc(g.a_md, b_md, g.y_md);
        const dnnl::matmul::primitive_desc pd(d, attr, DnnlEngine());
        g.prim = dnnl::matmul(pd);
        if (pack) g.b_packed = packed_b_.Get(b, g.b_md, pd.weights_desc());
        BindProductArgs(g.args, g.a_md, g.b_md, g.b_packed, g.y_md, g.use_bias ? &g.bias_md : nullptr);
        return g;
      });
      PointProductArgs(e.args, a, e.b_packed ? nullptr : &b, y, e.use_bias ? c : nullptr);
      if (e.use_sum) FillC(*c, cdims, y.data<float>(), m, n);
      if (k == 0) {
        // oneDNN needs a non-empty reduction; the product is zero.
        float* py = y.data<float>();
        for (int64_t i = 0; i < m * n; ++i) py[i] = e.use_sum ? beta_ * py[i] : 0.f;
        if (e.use_bias) FillC(*c, cdims, py, m, n);
        act_.Apply(py, m * n);
        return absl::OkStatus();
      }
      e.prim.execute(DnnlStream(), e.args.map());
      DnnlStream().wait();
    } catch (const dnnl::error& err) {
      return DnnlError("gemm", err);
    }
    return absl::OkStatus();
  }

  template <typename T>
  absl::Status Ref(const Tensor& a, const Tensor& b, const Tensor* c, const Dims& cdims,
                   Tensor& y, int64_t m, int64_t k, int64_t n) {
    using A = typename RefAcc<T>::type;
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* py = y.data<T>();
    const bool exact = alpha_ == 1.f && beta_ == 1.f;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        A acc = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          T av = trans_a_ ? pa[kk * m + i] : pa[i * k + kk];
          T bv = trans_b_ ? pb[j * k + kk] : pb[kk * n + j];
          acc += static_cast<A>(av) * static_cast<A>(bv);
        }
        T cv = c ? c->data<T>()[(cdims[0] == 1 ? 0 : i * cdims[1]) + (cdims[1] == 1 ? 0 : j)]
                 : T(0);
        if (exact) {
          py[i * n + j] = static_cast<T>(acc + static_cast<A>(cv));
        } else {
          double v = static_cast<double>(alpha_) * static_cast<double>(static_cast<T>(acc)) +
                     static_cast<double>(beta_) * static_cast<double>(cv);
          py[i * n + j] = static_cast<T>(v);
        }
      }
    }
    return absl::OkStatus();
  }

  FusedActivation act_;
  bool b_constant_;               // B is an initializer: its transpose is kept
  bool bt_ready_ = false;         // bt_ holds B^T already
  std::vector<float> bt_;         // B^T [k, n] for the small path with transB
  skinny::LazyPackedWeights packed_;  // constant B for the skinny path
  PackedMatMulWeights packed_b_;      // and for oneDNN's
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  ShapeCache<GemmEntry> cache_;
};

// ---------------------------------------------------------------------------------------
}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  const std::vector<DataType> mm1 = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  const std::vector<DataType> mm9 = {DataType::kFloat,  DataType::kDouble, DataType::kFloat16,
                                     DataType::kBfloat16, DataType::kInt32, DataType::kInt64,
                                     DataType::kUint32, DataType::kUint64};
  // MatMul: 1-8 floats; 9 added integer types; 13 added bfloat16 (same semantics).
  r.Add("MatMul", 1, 8, mm1, Make<MatMul>());
  r.Add("MatMul", 9, 12, mm9, Make<MatMul>());
  r.Add("MatMul", 13, kMaxOpset, mm9, Make<MatMul>());
  // Gemm: 1-6 had the `broadcast` attribute (C is broadcast either way here); 7 made C
  // unidirectionally broadcast; 9 added integer types; 11 made C optional; 13 bfloat16.
  r.Add("Gemm", 1, 6, mm1, Make<Gemm>());
  r.Add("Gemm", 7, 8, mm1, Make<Gemm>());
  r.Add("Gemm", 9, 10, mm9, Make<Gemm>());
  r.Add("Gemm", 11, 12, mm9, Make<Gemm>());
  r.Add("Gemm", 13, kMaxOpset, mm9, Make<Gemm>());
  const std::vector<DataType> f32 = {DataType::kFloat};
  r.Add(TandemKernel("FusedGemm", f32, Make<Gemm>()));
  r.Add(TandemKernel("FusedMatMul", f32, Make<MatMul>()));
}

}  // namespace tandem::cpu
