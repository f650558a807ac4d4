// Kernels of the ai.tandem ops emitted by the math, shape and softmax gradient rules
// (training/rules/elementwise.cc, shape.cc, softmax.cc). All take float types and
// compute in double for double, in float otherwise.
//   SigmoidGrad(dY, Y)        dY * Y * (1 - Y)
//   TanhGrad(dY, Y)           dY * (1 - Y^2)
//   AbsGrad(dY, X)            dY * sign(X)
//   LeakyReluGrad(dY, X)      X > 0 ? dY : alpha * dY               (attr alpha)
//   EluGrad(dY, X)            X > 0 ? dY : alpha * exp(X) * dY      (attr alpha)
//   SoftmaxGrad(dY, Y)        Y * (dY - sum(dY * Y))                (attrs axis, coerce)
//   LogSoftmaxGrad(dY, Y)     dY - exp(Y) * sum(dY)                 (attrs axis, coerce)
//     coerce=1: opset<13 semantics, the sums run over all dims from `axis` on.
//   ConcatGrad(dY, shape_0..shape_n-1) -> n pieces of dY along `axis` with the sizes
//     those shapes have there.
//   SliceGrad(dY, x_shape, starts, ends[, axes[, steps]]) -> zeros of x_shape with dY
//     written into the sliced positions (same geometry as Slice).
//   GatherGrad(dY, x_shape, indices) -> zeros of x_shape with dY scatter-added (attr axis).
//   ClipGrad(dY, X[, min[, max]]) -> dX, dmin, dmax: dY goes to whichever of X/min/max
//     the forward min(max(X, min), max) picked (attrs min/max for opset < 11).
//   DropoutGrad(dY, mask[, ratio[, training_mode]]) -> training ? dY * mask / (1 - ratio) : dY.
//   SwapLastAxes(X) -> X with its last two axes exchanged, for any rank >= 2 (what the
//     MatMul rule uses when shape inference left an operand's rank unknown).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "ops/slice_geometry.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

template <typename T>
using CompT = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
T From(CompT<T> v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

// Runs f(T{}) for float, double, float16, bfloat16; error otherwise.
template <typename F>
absl::Status VisitFloat(DataType t, F&& f) {
  switch (t) {
    case DataType::kFloat: f(float{}); return absl::OkStatus();
    case DataType::kDouble: f(double{}); return absl::OkStatus();
    case DataType::kFloat16: f(Float16{}); return absl::OkStatus();
    case DataType::kBfloat16: f(BFloat16{}); return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(std::string("gradients need a float type, got ") + DataTypeName(t));
  }
}

absl::Status SameShape(const Tensor& a, const Tensor& b, const char* what) {
  if (a.dims() != b.dims())
    return absl::InvalidArgumentError(std::string("dY ") + DimsToString(a.dims()) + " and " + what +
                                      " " + DimsToString(b.dims()) + " differ in shape");
  if (a.dtype() != b.dtype())
    return absl::InvalidArgumentError(std::string("dY and ") + what + " differ in element type");
  return absl::OkStatus();
}

// Reads a shape tensor (from Shape(X)) into Dims, checking it.
absl::StatusOr<Dims> ReadShape(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string(what) + " is missing");
  if (t->dtype() != DataType::kInt64 || t->rank() > 1)
    return absl::InvalidArgumentError(std::string(what) + " must be a 1-D int64 shape");
  Dims d = t->ToInt64Vector();
  absl::Status s = CheckOutputDims(d);
  if (!s.ok()) return s;
  return d;
}

// Elementwise dX = f(dY, V) with V the forward input or output.
enum class Unary { kSigmoid, kTanh, kAbs, kLeakyRelu, kElu };

template <Unary K>
class UnaryGrad : public Kernel {
 public:
  explicit UnaryGrad(const KernelInfo& info)
      : alpha_(info.node.attr_float("alpha", K == Unary::kLeakyRelu ? 0.01f : 1.f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Tensor& v = *ctx.input(1);
    absl::Status s = SameShape(dy, v, K == Unary::kSigmoid || K == Unary::kTanh ? "Y" : "X");
    if (!s.ok()) return s;
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), dy.dims());
    const int64_t n = dy.numel();
    return VisitFloat(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = CompT<T>;
      const T* g = dy.data<T>();
      const T* p = v.data<T>();
      T* out = dx.data<T>();
      const C alpha = static_cast<C>(alpha_);
      ParallelFor(n, [&](int64_t i) {
        const C gi = static_cast<C>(g[i]), vi = static_cast<C>(p[i]);
        C r;
        if constexpr (K == Unary::kSigmoid) r = gi * vi * (C(1) - vi);
        else if constexpr (K == Unary::kTanh) r = gi * (C(1) - vi * vi);
        else if constexpr (K == Unary::kAbs) r = vi > 0 ? gi : vi < 0 ? -gi : C(0);
        else if constexpr (K == Unary::kLeakyRelu) r = vi > 0 ? gi : alpha * gi;
        else r = vi > 0 ? gi : alpha * std::exp(vi) * gi;
        out[i] = From<T>(r);
      }, 65537);
    });
  }

 private:
  float alpha_;
};

template <bool kLog>
class SoftmaxGrad : public Kernel {
 public:
  explicit SoftmaxGrad(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", -1)), coerce_(info.node.attr_int("coerce", 0) != 0) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Tensor& y = *ctx.input(1);
    absl::Status s = SameShape(dy, y, "Y");
    if (!s.ok()) return s;
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), dy.dims());
    if (dy.numel() == 0) return absl::OkStatus();
    const int rank = dy.rank();
    int64_t outer = 1, n = 1, inner = 1;
    if (rank > 0) {
      auto a = NormalizeAxis(axis_, rank);
      if (!a.ok()) return a.status();
      outer = DimProduct(dy.dims(), 0, *a);
      if (coerce_) {
        n = DimProduct(dy.dims(), *a, rank);
      } else {
        n = dy.dim(*a);
        inner = DimProduct(dy.dims(), *a + 1, rank);
      }
    }
    return VisitFloat(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = CompT<T>;
      const T* g = dy.data<T>();
      const T* p = y.data<T>();
      T* out = dx.data<T>();
#pragma omp parallel for if (outer * inner > 64 && outer * n * inner > 65536)
      for (int64_t oi = 0; oi < outer * inner; ++oi) {
        const int64_t o = oi / inner, i = oi % inner;
        const int64_t base = o * n * inner + i;
        double acc = 0;
        for (int64_t j = 0; j < n; ++j) {
          const int64_t k = base + j * inner;
          acc += kLog ? static_cast<double>(static_cast<C>(g[k]))
                      : static_cast<double>(static_cast<C>(g[k])) * static_cast<C>(p[k]);
        }
        const C sum = static_cast<C>(acc);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t k = base + j * inner;
          const C gk = static_cast<C>(g[k]), yk = static_cast<C>(p[k]);
          out[k] = From<T>(kLog ? gk - std::exp(yk) * sum : yk * (gk - sum));
        }
      }
    });
  }

 private:
  int64_t axis_;
  bool coerce_;
};

class ConcatGrad : public Kernel {
 public:
  explicit ConcatGrad(const KernelInfo& info) : axis_(info.node.attr_int("axis", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    if (dy.rank() == 0) return absl::InvalidArgumentError("dY of Concat cannot be a scalar");
    auto a = NormalizeAxis(axis_, dy.rank());
    if (!a.ok()) return a.status();
    const int pieces = ctx.num_inputs() - 1;
    if (pieces != ctx.num_outputs())
      return absl::InvalidArgumentError("ConcatGrad needs one output per input shape");
    std::vector<int64_t> sizes;
    int64_t total = 0;
    for (int i = 0; i < pieces; ++i) {
      auto shape = ReadShape(ctx.input(i + 1), "input shape");
      if (!shape.ok()) return shape.status();
      if (static_cast<int>(shape->size()) != dy.rank())
        return absl::InvalidArgumentError("input " + std::to_string(i) + " shape " +
                                          DimsToString(*shape) + " does not match dY " +
                                          DimsToString(dy.dims()));
      sizes.push_back((*shape)[*a]);
      total += sizes.back();
    }
    if (total != dy.dim(*a))
      return absl::InvalidArgumentError("input sizes along the axis add up to " +
                                        std::to_string(total) + ", dY has " +
                                        std::to_string(dy.dim(*a)));
    const int64_t outer = DimProduct(dy.dims(), 0, *a);
    const int64_t inner = DimProduct(dy.dims(), *a + 1, dy.rank());
    const size_t esize = SizeOf(dy.dtype());
    const char* src = static_cast<const char*>(dy.raw());
    int64_t offset = 0;  // along the axis
    for (int i = 0; i < pieces; ++i) {
      Dims d = dy.dims();
      d[*a] = sizes[i];
      Tensor& out = ctx.AllocateOutput(i, dy.dtype(), d);
      const size_t block = static_cast<size_t>(sizes[i] * inner) * esize;
      char* dst = static_cast<char*>(out.raw());
      if (block > 0)
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(dst + o * block,
                      src + (static_cast<size_t>((o * dy.dim(*a) + offset) * inner)) * esize, block);
      offset += sizes[i];
    }
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

class SliceGrad : public Kernel {
 public:
  explicit SliceGrad(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    auto xs = ReadShape(ctx.input(1), "input 1 (shape of X)");
    if (!xs.ok()) return xs.status();
    if (!ctx.input(2) || !ctx.input(3)) return absl::InvalidArgumentError("starts and ends are required");
    std::vector<int64_t> axes, steps;
    if (ctx.input(4)) axes = ReadInt64s(*ctx.input(4));
    if (ctx.input(5)) steps = ReadInt64s(*ctx.input(5));
    const Dims& xd = *xs;
    auto view = ResolveSlice(xd, ReadInt64s(*ctx.input(2)), ReadInt64s(*ctx.input(3)), axes, steps);  // the forward's
    if (!view.ok()) return view.status();
    const Dims& expect = view->out;
    if (expect != dy.dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " does not match the slice " +
                                        DimsToString(expect) + " of " + DimsToString(xd));
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), xd);
    if (dx.numel() > 0) std::memset(dx.raw(), 0, dx.bytes());
    if (dy.numel() == 0) return absl::OkStatus();
    bool ok = VisitElementWidth(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, std::string>) {
        const T* src = dy.data<T>();
        T* dst = dx.data<T>() + view->base;
        ForEachBroadcast(dy.dims(), {view->strides},
                         [&](int64_t i, const std::vector<int64_t>& off) { dst[off[0]] = src[i]; });
      }
    });
    return ok && dy.dtype() != DataType::kString ? absl::OkStatus()
                                                 : absl::InvalidArgumentError("unsupported dY type");
  }
};

class GatherGrad : public Kernel {
 public:
  explicit GatherGrad(const KernelInfo& info) : axis_(info.node.attr_int("axis", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    auto xs = ReadShape(ctx.input(1), "input 1 (shape of X)");
    if (!xs.ok()) return xs.status();
    const Tensor* idx = ctx.input(2);
    if (!idx || (idx->dtype() != DataType::kInt64 && idx->dtype() != DataType::kInt32))
      return absl::InvalidArgumentError("indices must be int32 or int64");
    const Dims& xd = *xs;
    if (xd.empty()) return absl::InvalidArgumentError("Gather data cannot be a scalar");
    auto a = NormalizeAxis(axis_, static_cast<int>(xd.size()));
    if (!a.ok()) return a.status();
    Dims expect(xd.begin(), xd.begin() + *a);
    expect.insert(expect.end(), idx->dims().begin(), idx->dims().end());
    expect.insert(expect.end(), xd.begin() + *a + 1, xd.end());
    if (expect != dy.dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " does not match Gather output " +
                                        DimsToString(expect));
    const int64_t outer = DimProduct(xd, 0, *a), k = xd[*a];
    const int64_t inner = DimProduct(xd, *a + 1, static_cast<int>(xd.size()));
    const int64_t m = idx->numel();
    std::vector<int64_t> ind = idx->ToInt64Vector();
    for (int64_t& v : ind) {
      if (v < -k || v >= k)
        return absl::InvalidArgumentError("index " + std::to_string(v) + " is out of range for axis size " +
                                          std::to_string(k));
      if (v < 0) v += k;
    }
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), xd);
    // Zero everywhere (every float type's 0 is all zero bits), then each gathered row's sum:
    // the rows of dY that gathered it, added in their order (as one pass over dY would) in
    // the wider type, one task per distinct row. An embedding table's gradient touches few of
    // its rows.
    char* const bytes = static_cast<char*>(dx.raw());
    ParallelBlocks(static_cast<int64_t>(dx.bytes()), [&](int64_t b, int64_t e) { std::memset(bytes + b, 0, e - b); });
    std::vector<int64_t> order(static_cast<size_t>(m));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return ind[p] < ind[q]; });
    std::vector<int64_t> starts;  // of each run of one row in `order`, and m
    for (int64_t j = 0; j < m; ++j)
      if (j == 0 || ind[order[j]] != ind[order[j - 1]]) starts.push_back(j);
    starts.push_back(m);
    const int64_t rows = static_cast<int64_t>(starts.size()) - 1;
    return VisitFloat(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = CompT<T>;
      const T* g = dy.data<T>();
      T* out = dx.data<T>();
      ParallelForIf(outer * m * inner >= (int64_t{1} << 15), outer * rows, [&](int64_t task) {
        const int64_t o = task / rows, r = task % rows;
        std::vector<C> acc(static_cast<size_t>(inner), C(0));
        for (int64_t q = starts[r]; q < starts[r + 1]; ++q) {
          const T* src = g + (o * m + order[q]) * inner;
          for (int64_t i = 0; i < inner; ++i) acc[i] += static_cast<C>(src[i]);
        }
        T* dst = out + (o * k + ind[order[starts[r]]]) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = From<T>(acc[i]);
      });
    });
  }

 private:
  int64_t axis_;
};

class ClipGrad : public Kernel {
 public:
  explicit ClipGrad(const KernelInfo& info)
      : min_(info.node.attr_float("min", -std::numeric_limits<float>::infinity())),
        max_(info.node.attr_float("max", std::numeric_limits<float>::infinity())) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    absl::Status s = SameShape(dy, x, "X");
    if (!s.ok()) return s;
    const Tensor* lo_t = ctx.input(2);
    const Tensor* hi_t = ctx.input(3);
    for (const Tensor* b : {lo_t, hi_t})
      if (b && (b->numel() != 1 || b->dtype() != x.dtype()))
        return absl::InvalidArgumentError("min and max must be single values of X's type");
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), dy.dims());
    // An absent bound gets a zero gradient (scalar) if its output is read at all.
    const bool want_lo = ctx.output_wanted(1), want_hi = ctx.output_wanted(2);
    return VisitFloat(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = CompT<T>;
      const C lo = lo_t ? static_cast<C>(lo_t->data<T>()[0]) : static_cast<C>(min_);
      const C hi = hi_t ? static_cast<C>(hi_t->data<T>()[0]) : static_cast<C>(max_);
      const T* g = dy.data<T>();
      const T* xv = x.data<T>();
      T* out = dx.data<T>();
      double glo = 0, ghi = 0;
      for (int64_t i = 0; i < dy.numel(); ++i) {
        // Forward: v = x < lo ? lo : x; v = v > hi ? hi : v. dY flows to the picked source.
        const C xi = static_cast<C>(xv[i]);
        int src = 0;  // 0: x, 1: lo, 2: hi
        C v = xi;
        if (xi < lo) { v = lo; src = 1; }
        if (v > hi) src = 2;
        const C gi = static_cast<C>(g[i]);
        out[i] = From<T>(src == 0 ? gi : C(0));
        if (src == 1) glo += gi;
        if (src == 2) ghi += gi;
      }
      if (want_lo)
        ctx.AllocateOutput(1, dy.dtype(), lo_t ? lo_t->dims() : Dims{}).template data<T>()[0] =
            From<T>(static_cast<C>(glo));
      if (want_hi)
        ctx.AllocateOutput(2, dy.dtype(), hi_t ? hi_t->dims() : Dims{}).template data<T>()[0] =
            From<T>(static_cast<C>(ghi));
    });
  }

 private:
  float min_, max_;
};

class DropoutGrad : public Kernel {
 public:
  explicit DropoutGrad(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Tensor* mask = ctx.input(1);
    float ratio = 0.5f;
    if (const Tensor* r = ctx.input(2)) {
      if (r->numel() != 1) return absl::InvalidArgumentError("ratio must be a scalar");
      ratio = static_cast<float>(r->ElementAsDouble(0));
    }
    bool training = false;
    if (const Tensor* t = ctx.input(3)) {
      if (t->numel() != 1) return absl::InvalidArgumentError("training_mode must be a scalar");
      training = t->ElementAsInt64(0) != 0;
    }
    if (!training || ratio <= 0.f) {  // the forward was the identity
      ctx.SetOutput(0, dy);
      return absl::OkStatus();
    }
    if (!mask || mask->dims() != dy.dims())
      return absl::InvalidArgumentError("mask is missing or its shape differs from dY");
    const double scale = ratio < 1.f ? 1.0 / (1.0 - ratio) : 0.0;
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), dy.dims());
    return VisitFloat(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = CompT<T>;
      const T* g = dy.data<T>();
      T* out = dx.data<T>();
      const int64_t n = dy.numel();
      if (mask->dtype() == DataType::kBool) {
        const bool* m = mask->data<bool>();
        for (int64_t i = 0; i < n; ++i)
          out[i] = m[i] ? From<T>(static_cast<C>(static_cast<C>(g[i]) * scale)) : From<T>(C(0));
      } else {
        for (int64_t i = 0; i < n; ++i)
          out[i] = mask->ElementAsDouble(i) != 0 ? From<T>(static_cast<C>(static_cast<C>(g[i]) * scale))
                                                  : From<T>(C(0));
      }
    });
  }
};

class SwapLastAxes : public Kernel {
 public:
  explicit SwapLastAxes(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2) return absl::InvalidArgumentError("X has rank " + std::to_string(x.rank()) + ", needs >= 2");
    Dims dims = x.dims();
    const int64_t rows = dims[dims.size() - 2], cols = dims.back();
    std::swap(dims[dims.size() - 2], dims.back());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), dims);
    std::vector<int64_t> strides = Strides(x.dims());  // y's index walks x with these
    std::swap(strides[strides.size() - 2], strides.back());
    VisitElementWidth(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      TransposeCopy(static_cast<const T*>(x.raw()), dims, strides, static_cast<T*>(y.raw()));
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterGradMathKernels(KernelRegistry& r) {
  r.Add(TandemKernel("SigmoidGrad", types::kFloats, Make<UnaryGrad<Unary::kSigmoid>>()));
  r.Add(TandemKernel("TanhGrad", types::kFloats, Make<UnaryGrad<Unary::kTanh>>()));
  r.Add(TandemKernel("AbsGrad", types::kFloats, Make<UnaryGrad<Unary::kAbs>>()));
  r.Add(TandemKernel("LeakyReluGrad", types::kFloats, Make<UnaryGrad<Unary::kLeakyRelu>>()));
  r.Add(TandemKernel("EluGrad", types::kFloats, Make<UnaryGrad<Unary::kElu>>()));
  r.Add(TandemKernel("SoftmaxGrad", types::kFloats, Make<SoftmaxGrad<false>>()));
  r.Add(TandemKernel("LogSoftmaxGrad", types::kFloats, Make<SoftmaxGrad<true>>()));
  r.Add(TandemKernel("ConcatGrad", types::kFloats, Make<ConcatGrad>()));
  r.Add(TandemKernel("SliceGrad", types::kFloats, Make<SliceGrad>()));
  r.Add(TandemKernel("GatherGrad", types::kFloats, Make<GatherGrad>()));
  r.Add(TandemKernel("ClipGrad", types::kFloats, Make<ClipGrad>()));
  r.Add(TandemKernel("DropoutGrad", types::kFloats, Make<DropoutGrad>()));
  r.Add(TandemKernel("SwapLastAxes", types::kFloats, Make<SwapLastAxes>()));
}

}  // namespace tandem::cpu
