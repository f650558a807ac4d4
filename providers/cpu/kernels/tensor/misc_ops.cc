// Miscellaneous reference kernels: TopK, CumSum, CumProd, Dropout, Unique, MaxUnpool, Det.
// Resize/Upsample/GridSample live in resize.cc, NonMaxSuppression in non_max_suppression.cc,
// Einsum in einsum.cc and the linear (de)quantization ops in quantize_linear_ops.cc.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/dropout_mask.h"
#include "ops/dropout_seed.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Value as double for ordering/arithmetic (exact for all integer types up to 2^53).
template <typename T>
double ToD(T v) {
  return static_cast<double>(v);
}

// Strict "a before b" for descending (largest) or ascending order; NaN counts as the
// largest value so the order stays a strict weak ordering.
template <typename T>
bool Greater(T a, T b) {
  if constexpr (std::is_floating_point_v<T> || kIsHalf<T>) {
    double x = ToD(a), y = ToD(b);
    if (std::isnan(x)) return !std::isnan(y);
    if (std::isnan(y)) return false;
    return x > y;
  } else {
    return a > b;
  }
}

// ---------------------------------------------------------------------------- TopK
class TopK : public Kernel {
 public:
  explicit TopK(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.node.attr_int("axis", -1)),
        k_attr_(info.node.attr_int("k", -1)),
        largest_(info.node.attr_int("largest", 1) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    int64_t k = k_attr_;
    if (opset_ >= 10) {
      const Tensor* kt = ctx.input(1);
      if (!kt || kt->numel() != 1)
        return absl::InvalidArgumentError("input 1 (K) must be a tensor with one element");
      k = kt->ElementAsInt64(0);
    }
    auto axis_or = NormalizeAxis(axis_, x.rank());
    if (!axis_or.ok()) return axis_or.status();
    if (x.rank() == 0) return absl::InvalidArgumentError("input 0 must have rank >= 1");
    const int axis = *axis_or;
    const int64_t n = x.dim(axis);
    if (k < 0 || k > n)
      return absl::InvalidArgumentError("k = " + std::to_string(k) + " is out of range [0, " +
                                        std::to_string(n) + "] for axis " +
                                        std::to_string(axis) + " of shape " +
                                        DimsToString(x.dims()));
    Dims od = x.dims();
    od[axis] = k;
    Tensor& values = ctx.AllocateOutput(0, x.dtype(), od);
    Tensor& indices = ctx.AllocateOutput(1, DataType::kInt64, od);
    if (values.numel() == 0) return absl::OkStatus();
    const int64_t outer = DimProduct(x.dims(), 0, axis);
    const int64_t inner = DimProduct(x.dims(), axis + 1, x.rank());
    int64_t* iout = indices.data<int64_t>();
    bool ok = VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* vout = values.data<T>();
      std::vector<int64_t> idx(n);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* base = in + o * n * inner + i;
          std::iota(idx.begin(), idx.end(), 0);
          auto cmp = [&](int64_t a, int64_t b) {
            T va = base[a * inner], vb = base[b * inner];
            bool before = largest_ ? Greater(va, vb) : Greater(vb, va);
            if (before) return true;
            bool after = largest_ ? Greater(vb, va) : Greater(va, vb);
            return !after && a < b;  // ties: lower index first
          };
          std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), cmp);
          for (int64_t j = 0; j < k; ++j) {
            int64_t off = o * k * inner + j * inner + i;
            vout[off] = base[idx[j] * inner];
            iout[off] = idx[j];
          }
        }
      }
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return absl::OkStatus();
  }

 private:
  int opset_;
  int64_t axis_, k_attr_;
  bool largest_;
};

// ----------------------------------------------------------------- CumSum, CumProd
// Running sum (or product) along the axis input; `exclusive` starts from 0 (or 1).
class CumSum : public Kernel {
 public:
  explicit CumSum(const KernelInfo& info)
      : product_(info.node.op_type == "CumProd"),
        exclusive_(info.node.attr_int("exclusive", 0) != 0),
        reverse_(info.node.attr_int("reverse", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* at = ctx.input(1);
    if (!at || at->numel() != 1 || at->rank() > 1)
      return absl::InvalidArgumentError("input 1 (axis) must be a scalar or 1-element tensor");
    auto axis_or = NormalizeAxis(at->ElementAsInt64(0), x.rank());
    if (!axis_or.ok()) return axis_or.status();
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.numel() == 0) return absl::OkStatus();
    const int axis = x.rank() == 0 ? 0 : *axis_or;
    const int64_t n = x.rank() == 0 ? 1 : x.dim(axis);
    const int64_t outer = x.rank() == 0 ? 1 : DimProduct(x.dims(), 0, axis);
    const int64_t inner = x.rank() == 0 ? 1 : DimProduct(x.dims(), axis + 1, x.rank());
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using Acc = std::conditional_t<kIsHalf<T>, float, T>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          Acc acc = Acc(product_ ? 1 : 0);
          for (int64_t s = 0; s < n; ++s) {
            int64_t j = reverse_ ? n - 1 - s : s;
            int64_t off = (o * n + j) * inner + i;
            Acc v = static_cast<Acc>(in[off]);
            if (exclusive_) out[off] = static_cast<T>(acc);
            acc = static_cast<Acc>(product_ ? acc * v : acc + v);
            if (!exclusive_) out[off] = static_cast<T>(acc);
          }
        }
      }
    });
    return absl::OkStatus();
  }

 private:
  bool product_, exclusive_, reverse_;
};

// ------------------------------------------------------------------------- Dropout
// Training-mode masks come from dropout_mask.h: a pure function of (seed, counter, index).
// The seed is the `seed` attribute (the training graph always sets one), else drawn from
// std::random_device per kernel. The counter is the optional 4th input, a Tandem
// extension the training graph feeds with the optimizer step (int64 scalar); without it
// the kernel counts its own calls, so a seeded node still draws a new mask per call. The
// optional 5th input (data-parallel training) is the global index of the batch's first
// row on this rank: element i draws as element first_row * (elements per row) + i of the
// global batch, so the ranks' shares draw the one-process run's mask.
class Dropout : public Kernel {
 public:
  explicit Dropout(const KernelInfo& info)
      : opset_(info.opset), ratio_attr_(info.node.attr_float("ratio", 0.5f)), seed_(DropoutSeed(info.node)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    float ratio = ratio_attr_;
    bool training = false;
    if (opset_ >= 12) {
      if (const Tensor* r = ctx.input(1)) {
        if (r->numel() != 1) return absl::InvalidArgumentError("input 1 (ratio) must be a scalar");
        ratio = static_cast<float>(r->ElementAsDouble(0));
      }
      if (const Tensor* t = ctx.input(2)) {
        if (t->numel() != 1)
          return absl::InvalidArgumentError("input 2 (training_mode) must be a scalar");
        training = t->ElementAsInt64(0) != 0;
      }
    }
    const Tensor* c = ctx.input(3);
    if (c && c->numel() != 1) return absl::InvalidArgumentError("input 3 (counter) must be a scalar");
    const uint64_t counter = c ? static_cast<uint64_t>(c->ElementAsInt64(0)) : calls_++;
    const Tensor* first = ctx.input(4);
    if (first && first->numel() != 1) return absl::InvalidArgumentError("input 4 (first row) must be a scalar");
    const uint64_t offset = first && x.rank() > 0 && x.dim(0) > 0
                                ? static_cast<uint64_t>(first->ElementAsInt64(0) * (x.numel() / x.dim(0)))
                                : 0;
    if (training && ratio > 0.f) {
      if (!(ratio <= 1.f))
        return absl::InvalidArgumentError("ratio must be in [0, 1], got " + std::to_string(ratio));
      Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
      bool* mask = ctx.output_wanted(1) ? ctx.AllocateOutput(1, DataType::kBool, x.dims()).data<bool>()
                                        : nullptr;
      const uint64_t key = dropout::StreamKey(seed_, counter);
      const double scale = ratio < 1.f ? 1.0 / (1.0 - ratio) : 0.0;
      VisitNumericType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* in = x.data<T>();
        T* out = y.data<T>();
        for (int64_t i = 0; i < x.numel(); ++i) {
          const bool keep = dropout::Keep(key, offset + static_cast<uint64_t>(i), ratio);
          out[i] = keep ? static_cast<T>(ToD(in[i]) * scale) : static_cast<T>(0.0);
          if (mask) mask[i] = keep;
        }
      });
      return absl::OkStatus();
    }
    ctx.SetOutput(0, x);
    if (ctx.output_wanted(1)) {
      // Opset 7-9 returns the mask in the input's type; later versions as bool.
      DataType mt = opset_ < 10 ? x.dtype() : DataType::kBool;
      Tensor& m = ctx.AllocateOutput(1, mt, x.dims());
      if (mt == DataType::kBool) {  // every element kept: one byte each (a transformer's: megabytes)
        std::memset(m.raw(), 1, m.bytes());
      } else {
        VisitNumericType(mt, [&](auto tag) {
          using T = decltype(tag);
          T* p = m.data<T>();
          for (int64_t i = 0; i < m.numel(); ++i) p[i] = static_cast<T>(1.0);
        });
      }
    }
    return absl::OkStatus();
  }

 private:
  int opset_;
  float ratio_attr_;
  uint64_t seed_;
  std::atomic<uint64_t> calls_{0};
};

// -------------------------------------------------------------------------- Unique
class Unique : public Kernel {
 public:
  explicit Unique(const KernelInfo& info)
      : sorted_(info.node.attr_int("sorted", 1) != 0),
        has_axis_(info.node.has_attr("axis")),
        axis_(info.node.attr_int("axis", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    // View x as [outer, n, inner]; "items" are the n slices along the axis.
    int axis = 0;
    int64_t outer = 1, n = x.numel(), inner = 1;
    if (has_axis_) {
      if (x.rank() == 0) return absl::InvalidArgumentError("axis given for a scalar input");
      auto a = NormalizeAxis(axis_, x.rank());
      if (!a.ok()) return a.status();
      axis = *a;
      outer = DimProduct(x.dims(), 0, axis);
      n = x.dim(axis);
      inner = DimProduct(x.dims(), axis + 1, x.rank());
    }
    std::vector<int64_t> first;    // first occurrence of each unique item, output order
    std::vector<int64_t> inverse(n), counts;
    auto run = [&](auto* data, auto less) {
      auto item_less = [&](int64_t a, int64_t b) {
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const auto& va = data[(o * n + a) * inner + i];
            const auto& vb = data[(o * n + b) * inner + i];
            if (less(va, vb)) return true;
            if (less(vb, va)) return false;
          }
        return false;
      };
      std::vector<int64_t> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), item_less);
      // Group equal items; group id by sorted value.
      std::vector<int64_t> group_first, group_of(n);
      for (int64_t j = 0; j < n; ++j) {
        if (j == 0 || item_less(order[j - 1], order[j])) group_first.push_back(order[j]);
        group_of[order[j]] = static_cast<int64_t>(group_first.size()) - 1;
      }
      const int64_t g = static_cast<int64_t>(group_first.size());
      std::vector<int64_t> rank_of(g);  // output position of each group
      std::iota(rank_of.begin(), rank_of.end(), 0);
      if (!sorted_) {
        std::vector<int64_t> by_first(g);
        std::iota(by_first.begin(), by_first.end(), 0);
        std::sort(by_first.begin(), by_first.end(),
                  [&](int64_t a, int64_t b) { return group_first[a] < group_first[b]; });
        for (int64_t p = 0; p < g; ++p) rank_of[by_first[p]] = p;
      }
      first.assign(g, 0);
      counts.assign(g, 0);
      for (int64_t p = 0; p < g; ++p) first[rank_of[p]] = group_first[p];
      for (int64_t j = 0; j < n; ++j) {
        inverse[j] = rank_of[group_of[j]];
        ++counts[inverse[j]];
      }
    };
    if (x.dtype() == DataType::kString) {
      run(x.data<std::string>(), std::less<std::string>());
    } else {
      bool ok = VisitNumericType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        run(x.data<T>(), [](T a, T b) { return Greater(b, a); });
      });
      if (!ok) return absl::InvalidArgumentError("unsupported element type");
    }
    const int64_t g = static_cast<int64_t>(first.size());
    Dims yd = has_axis_ ? x.dims() : Dims{g};
    if (has_axis_) yd[axis] = g;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), yd);
    const size_t es = SizeOf(x.dtype());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p = 0; p < g; ++p)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t src = (o * n + first[p]) * inner + i, dst = (o * g + p) * inner + i;
          if (x.dtype() == DataType::kString)
            y.data<std::string>()[dst] = x.data<std::string>()[src];
          else
            std::memcpy(static_cast<char*>(y.raw()) + dst * es,
                        static_cast<const char*>(x.raw()) + src * es, es);
        }
    auto put = [&](int i, const std::vector<int64_t>& v) {
      if (!ctx.output_wanted(i)) return;
      Tensor& t = ctx.AllocateOutput(i, DataType::kInt64, {static_cast<int64_t>(v.size())});
      std::copy(v.begin(), v.end(), t.data<int64_t>());
    };
    put(1, first);
    put(2, inverse);
    put(3, counts);
    return absl::OkStatus();
  }

 private:
  bool sorted_, has_axis_;
  int64_t axis_;
};

// ----------------------------------------------------------------------- MaxUnpool
class MaxUnpool : public Kernel {
 public:
  explicit MaxUnpool(const KernelInfo& info)
      : kernel_(info.node.attr_ints("kernel_shape")),
        pads_(info.node.attr_ints("pads")),
        strides_(info.node.attr_ints("strides")) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* ip = ctx.input(1);
    if (!ip) return absl::InvalidArgumentError("missing input 1 (I)");
    const Tensor& ind = *ip;
    const int sp = x.rank() - 2;
    if (sp < 1) return absl::InvalidArgumentError("input X must have rank >= 3");
    if (static_cast<int>(kernel_.size()) != sp)
      return absl::InvalidArgumentError("kernel_shape must have " + std::to_string(sp) +
                                        " values");
    if (ind.dims() != x.dims())
      return absl::InvalidArgumentError("indices shape " + DimsToString(ind.dims()) +
                                        " differs from X shape " + DimsToString(x.dims()));
    std::vector<int64_t> pads = pads_.empty() ? std::vector<int64_t>(2 * sp, 0) : pads_;
    std::vector<int64_t> strides = strides_.empty() ? std::vector<int64_t>(sp, 1) : strides_;
    if (static_cast<int>(pads.size()) != 2 * sp || static_cast<int>(strides.size()) != sp)
      return absl::InvalidArgumentError("pads/strides have the wrong number of values");
    // Indices address the default output shape; an explicit output_shape (which must
    // not be smaller) places that block at its origin, zero elsewhere (as the ONNX
    // reference does).
    Dims dd = x.dims();
    for (int i = 0; i < sp; ++i)
      dd[2 + i] = (x.dim(2 + i) - 1) * strides[i] + kernel_[i] - pads[i] - pads[sp + i];
    for (int64_t d : dd)
      if (d < 0) return absl::InvalidArgumentError("negative output dimension");
    Dims od = dd;
    if (const Tensor* os = ctx.input(2)) {
      od = ReadInt64s(*os);
      if (static_cast<int>(od.size()) != x.rank())
        return absl::InvalidArgumentError("output_shape must have " +
                                          std::to_string(x.rank()) + " values");
      for (int i = 0; i < x.rank(); ++i)
        if (od[i] < dd[i])
          return absl::InvalidArgumentError("output_shape " + DimsToString(od) +
                                            " is smaller than the default output shape " +
                                            DimsToString(dd));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), od);
    const int64_t total = NumElements(dd);
    const size_t es = SizeOf(x.dtype());
    std::memset(y.raw(), 0, y.bytes());
    const std::vector<int64_t> dstr = Strides(dd), ostr = Strides(od);
    const int64_t* idx = ind.data<int64_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t t = idx[i];
      if (t < 0 || t >= total)
        return absl::InvalidArgumentError("index " + std::to_string(t) +
                                          " is out of range for output shape " +
                                          DimsToString(dd));
      int64_t o = 0;
      for (int d = 0; d < x.rank(); ++d) o += (t / dstr[d]) % dd[d] * ostr[d];
      std::memcpy(static_cast<char*>(y.raw()) + o * es,
                  static_cast<const char*>(x.raw()) + i * es, es);
    }
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> kernel_, pads_, strides_;
};

// ----------------------------------------------------------------------------- Det
class Det : public Kernel {
 public:
  explicit Det(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.rank() < 2 || x.dim(-1) != x.dim(-2))
      return absl::InvalidArgumentError("input must have shape [*, M, M], got " +
                                        DimsToString(x.dims()));
    const int64_t m = x.dim(-1);
    Dims od(x.dims().begin(), x.dims().end() - 2);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), od);
    const int64_t batch = y.numel();
    std::vector<double> a(static_cast<size_t>(m * m));
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < m * m; ++i) a[i] = ToD(in[b * m * m + i]);
        double det = 1;
        // LU decomposition with partial pivoting.
        for (int64_t c = 0; c < m && det != 0; ++c) {
          int64_t p = c;
          for (int64_t r = c + 1; r < m; ++r)
            if (std::fabs(a[r * m + c]) > std::fabs(a[p * m + c])) p = r;
          if (a[p * m + c] == 0) { det = 0; break; }
          if (p != c) {
            for (int64_t k = 0; k < m; ++k) std::swap(a[p * m + k], a[c * m + k]);
            det = -det;
          }
          double piv = a[c * m + c];
          det *= piv;
          for (int64_t r = c + 1; r < m; ++r) {
            double f = a[r * m + c] / piv;
            if (f == 0) continue;
            for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
          }
        }
        out[b] = static_cast<T>(det);
      }
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterMiscKernels(KernelRegistry& r) {
  using DT = DataType;
  r.Add("TopK", 1, 9, types::kFloats, Make<TopK>());
  r.Add("TopK", 10, 10, types::kFloats, Make<TopK>());
  r.Add("TopK", 11, kMaxOpset, types::kNumeric, Make<TopK>());
  const std::vector<DT> cumsum_types = {DT::kUint32, DT::kUint64, DT::kInt32, DT::kInt64,
                                        DT::kFloat,  DT::kDouble, DT::kFloat16, DT::kBfloat16};
  r.Add("CumSum", 11, 13, cumsum_types, Make<CumSum>());
  r.Add("CumSum", 14, kMaxOpset, cumsum_types, Make<CumSum>());
  r.Add("CumProd", 26, kMaxOpset, cumsum_types, Make<CumSum>());
  r.Add("Dropout", 7, 9, types::kFloats, Make<Dropout>());
  r.Add("Dropout", 10, 11, types::kFloats, Make<Dropout>());
  r.Add("Dropout", 12, kMaxOpset, types::kFloats, Make<Dropout>());
  r.Add("Unique", 11, kMaxOpset, types::kAll, Make<Unique>());
  r.Add("MaxUnpool", 9, 10, types::kFloats, Make<MaxUnpool>());
  r.Add("MaxUnpool", 11, kMaxOpset, types::kFloats, Make<MaxUnpool>());
  r.Add("Det", 11, kMaxOpset, types::kFloats, Make<Det>());
}

}  // namespace tandem::cpu
