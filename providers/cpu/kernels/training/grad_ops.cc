// Kernels of the ai.tandem ops that gradient rules emit (see training/rules/).
//   SumToShape(dY, like): sums dY over the dims broadcast to reach it from like's shape.
//   ReluGrad(dY, Y):      dY where Y > 0, else 0.
//   ScalarLike(like):     a scalar holding attribute `value` in like's element type.
//   MeanScale(g, X, Y):   g * size(Y) / size(X) — the 1/count of a mean reduction X -> Y.
#include <algorithm>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

// Adds the rows [begin, end) of dY into acc (indexed like the target): a row whose
// target step is 1 adds element-wise, a row broadcast from one target element adds its sum.
template <typename T, typename Acc>
void AddRowsInto(const BroadcastRows& rows, const T* src, Acc* acc, int64_t begin, int64_t end) {
  const int64_t step = rows.steps()[0];
  rows.RunRows(begin, end, [&](int64_t o, const int64_t* off, int64_t n) {
    const T* s = src + o;
    Acc* a = acc + off[0];
    if (step) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) a[i] += static_cast<Acc>(s[i]);
    } else {
      Acc t{};
#pragma omp simd reduction(+ : t)
      for (int64_t i = 0; i < n; ++i) t += static_cast<Acc>(s[i]);
      a[0] += t;
    }
  });
}

// Whether `target` (right-aligned to `dims`) keeps a suffix of dims and is 1 on the
// rest: then dY is [rows, numel(target)] in memory and the sum runs down its columns.
inline bool LeadingOnly(const Dims& dims, const Dims& target) {
  const size_t off = dims.size() - target.size();
  size_t k = dims.size();
  while (k > off && target[k - 1 - off] == dims[k - 1]) --k;
  for (size_t d = off; d < k; ++d)
    if (target[d - off] != 1) return false;
  return true;
}

class SumToShape : public Kernel {
 public:
  explicit SumToShape(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Dims& target = ctx.input(1)->dims();
    if (dy.dims() == target) {
      ctx.SetOutput(0, dy);
      return absl::OkStatus();
    }
    auto check = BroadcastShapes(target, dy.dims());
    if (!check.ok() || *check != dy.dims())
      return absl::InvalidArgumentError("cannot sum " + DimsToString(dy.dims()) + " down to " +
                                        DimsToString(target));
    if (NumElements(target) == dy.numel()) {  // only 1-sized dims differ: nothing to sum
      ctx.SetOutput(0, dy.Reshaped(target));
      return absl::OkStatus();
    }
    Tensor& out = ctx.AllocateOutput(0, dy.dtype(), target);
    absl::Status status;
    VisitNumericType(dy.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        status = absl::InvalidArgumentError("bool gradients are meaningless");
      } else {
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double,
                                       std::conditional_t<std::is_integral_v<T>, int64_t, float>>;
        const int64_t m = out.numel();
        if (m == 0) return;  // nothing to sum into (dY is empty too)
        // Threads split dY's rows, each into its own partial sum (a cache line apart);
        // the partials are added in thread order, so a result depends only on the thread count.
        const int parts = dy.numel() >= (1 << 15) && m * 4 <= dy.numel()
                              ? std::max(1, ctx.num_threads()) : 1;
        const int64_t stride = (m + 7) / 8 * 8;
        std::vector<Acc> acc(static_cast<size_t>(stride * parts), Acc{});
        BroadcastRows rows(dy.dims(), {target});
        const T* src = dy.data<T>();
        // dY as [r, m] summed over its rows (a bias gradient), or broadcast rows in general.
        const bool leading = LeadingOnly(dy.dims(), target);
        const int64_t r = leading ? dy.numel() / m : rows.rows();
        auto add = [&](Acc* a, int64_t begin, int64_t end) {
          if (!leading) return AddRowsInto(rows, src, a, begin, end);
          if constexpr (std::is_same_v<T, float>) {
            // Blocks of rows summed in float (4 or more lanes a vector, no conversions), each
            // block's sums then added in double: a block's rounding is that of a few dozen terms.
            constexpr int64_t kBlock = 32;
            std::vector<float> part(static_cast<size_t>(m));
            for (int64_t i0 = begin; i0 < end; i0 += kBlock) {
              std::copy(src + i0 * m, src + (i0 + 1) * m, part.begin());
              for (int64_t i = i0 + 1; i < std::min(i0 + kBlock, end); ++i) {
                const float* s = src + i * m;
                float* pp = part.data();
#pragma omp simd
                for (int64_t j = 0; j < m; ++j) pp[j] += s[j];
              }
#pragma omp simd
              for (int64_t j = 0; j < m; ++j) a[j] += static_cast<Acc>(part[j]);
            }
            return;
          }
          for (int64_t i = begin; i < end; ++i) {
            const T* s = src + i * m;
#pragma omp simd
            for (int64_t j = 0; j < m; ++j) a[j] += static_cast<Acc>(s[j]);
          }
        };
        if (parts > 1) {
#pragma omp parallel for num_threads(parts) schedule(static, 1)
          for (int p = 0; p < parts; ++p) add(acc.data() + p * stride, r * p / parts, r * (p + 1) / parts);
          for (int p = 1; p < parts; ++p)
            for (int64_t i = 0; i < m; ++i) acc[i] += acc[p * stride + i];
        } else {
          add(acc.data(), 0, r);
        }
        T* dst = out.data<T>();
        for (int64_t i = 0; i < m; ++i) dst[i] = static_cast<T>(acc[i]);
      }
    });
    return status;
  }
};

class ReluGrad : public Kernel {
 public:
  explicit ReluGrad(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& dy = *ctx.input(0);
    const Tensor& y = *ctx.input(1);
    if (dy.dims() != y.dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " and Y " +
                                        DimsToString(y.dims()) + " differ in shape");
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), dy.dims());
    const int64_t n = dy.numel();
    if (dy.dtype() == DataType::kFloat) Run(dy.data<float>(), y.data<float>(), dx.data<float>(), n);
    else if (dy.dtype() == DataType::kDouble) Run(dy.data<double>(), y.data<double>(), dx.data<double>(), n);
    else
      VisitNumericType(dy.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* g = dy.data<T>();
        const T* v = y.data<T>();
        T* out = dx.data<T>();
#pragma omp parallel for if (n > 65536)
        for (int64_t i = 0; i < n; ++i)
          out[i] = static_cast<float>(v[i]) > 0 ? g[i] : T(0.f);
      });
    return absl::OkStatus();
  }

 private:
  // Tight, vectorizable loop in chunks of 16K elements shared among the threads.
  template <typename T>
  static void Run(const T* __restrict g, const T* __restrict v, T* __restrict out, int64_t n) {
    constexpr int64_t kChunk = 1 << 14;
    const int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (n >= (1 << 15))
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t end = std::min(n, (c + 1) * kChunk);
      for (int64_t i = c * kChunk; i < end; ++i) out[i] = v[i] > T(0) ? g[i] : T(0);
    }
  }
};

class ScalarLike : public Kernel {
 public:
  explicit ScalarLike(const KernelInfo& info) : value_(info.node.attr_float("value", 0.f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    DataType t = ctx.input(0)->dtype();
    Tensor& out = ctx.AllocateOutput(0, t, {});
    bool ok = VisitNumericType(t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) out.data<T>()[0] = T(value_);
      else out.data<T>()[0] = static_cast<T>(value_);
    });
    return ok ? absl::OkStatus() : absl::InvalidArgumentError("non-numeric type");
  }

 private:
  float value_;
};

class MeanScale : public Kernel {
 public:
  explicit MeanScale(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& g = *ctx.input(0);
    const int64_t in = ctx.input(1)->numel(), out = ctx.input(2)->numel();
    if (in == 0) return absl::InvalidArgumentError("mean over an empty tensor");
    const double scale = static_cast<double>(out) / static_cast<double>(in);
    Tensor& y = ctx.AllocateOutput(0, g.dtype(), g.dims());
    const int64_t n = g.numel();
    VisitNumericType(g.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = g.data<T>();
      T* dst = y.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
          dst[i] = T(static_cast<float>(static_cast<float>(src[i]) * scale));
        else
          dst[i] = static_cast<T>(src[i] * scale);
      }
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterGradKernels(KernelRegistry& r) {
  r.Add(TandemKernel("SumToShape", types::kNumeric, Make<SumToShape>()));
  r.Add(TandemKernel("ReluGrad", types::kFloats, Make<ReluGrad>()));
  r.Add(TandemKernel("ScalarLike", types::kNumeric, Make<ScalarLike>()));
  r.Add(TandemKernel("MeanScale", types::kFloats, Make<MeanScale>()));
}

}  // namespace tandem::cpu
