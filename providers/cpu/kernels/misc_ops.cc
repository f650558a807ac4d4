// Miscellaneous reference kernels: TopK, CumSum, CumProd, Dropout, Unique, NonMaxSuppression,
// MaxUnpool, Det and the linear (de)quantization ops. Resize/Upsample/GridSample live
// in resize.cc and Einsum in einsum.cc.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/low_precision.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/dropout_mask.h"
#include "providers/cpu/kernels/register.h"
#include "ops/dropout_seed.h"

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
      VisitNumericType(mt, [&](auto tag) {
        using T = decltype(tag);
        T* p = m.data<T>();
        for (int64_t i = 0; i < m.numel(); ++i) p[i] = static_cast<T>(1.0);
      });
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

// --------------------------------------------------------------- NonMaxSuppression
class NonMaxSuppression : public Kernel {
 public:
  explicit NonMaxSuppression(const KernelInfo& info)
      : center_point_box_(info.node.attr_int("center_point_box", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& boxes_t = *ctx.input(0);
    const Tensor* scores_p = ctx.input(1);
    if (!scores_p) return absl::InvalidArgumentError("missing input 1 (scores)");
    const Tensor& scores_t = *scores_p;
    if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4)
      return absl::InvalidArgumentError("boxes must have shape [batch, boxes, 4], got " +
                                        DimsToString(boxes_t.dims()));
    if (scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) ||
        scores_t.dim(2) != boxes_t.dim(1))
      return absl::InvalidArgumentError("scores shape " + DimsToString(scores_t.dims()) +
                                        " does not match boxes shape " +
                                        DimsToString(boxes_t.dims()));
    if (center_point_box_ != 0 && center_point_box_ != 1)
      return absl::InvalidArgumentError("center_point_box must be 0 or 1");
    int64_t max_out = 0;
    if (const Tensor* t = ctx.input(2); t && t->numel() > 0) max_out = t->ElementAsInt64(0);
    double iou_th = 0;
    if (const Tensor* t = ctx.input(3); t && t->numel() > 0) iou_th = t->ElementAsDouble(0);
    bool has_score_th = false;
    double score_th = 0;
    if (const Tensor* t = ctx.input(4); t && t->numel() > 0) {
      has_score_th = true;
      score_th = t->ElementAsDouble(0);
    }
    if (iou_th < 0 || iou_th > 1)
      return absl::InvalidArgumentError("iou_threshold must be in [0, 1]");
    const int64_t nb = boxes_t.dim(0), nbox = boxes_t.dim(1), nc = scores_t.dim(1);
    // Corners as (y1, x1, y2, x2) with y1<=y2, x1<=x2.
    std::vector<double> corners(static_cast<size_t>(nb * nbox * 4));
    for (int64_t i = 0; i < nb * nbox; ++i) {
      double v[4];
      for (int j = 0; j < 4; ++j) v[j] = boxes_t.ElementAsDouble(i * 4 + j);
      double y1, x1, y2, x2;
      if (center_point_box_) {
        x1 = v[0] - v[2] / 2; x2 = v[0] + v[2] / 2;
        y1 = v[1] - v[3] / 2; y2 = v[1] + v[3] / 2;
      } else {
        y1 = std::min(v[0], v[2]); y2 = std::max(v[0], v[2]);
        x1 = std::min(v[1], v[3]); x2 = std::max(v[1], v[3]);
      }
      double* c = &corners[i * 4];
      c[0] = y1; c[1] = x1; c[2] = y2; c[3] = x2;
    }
    auto suppress = [&](const double* a, const double* b) {
      double area_a = (a[2] - a[0]) * (a[3] - a[1]);
      double area_b = (b[2] - b[0]) * (b[3] - b[1]);
      if (area_a <= 0 || area_b <= 0) return false;
      double ih = std::min(a[2], b[2]) - std::max(a[0], b[0]);
      double iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
      if (ih <= 0 || iw <= 0) return false;
      double inter = ih * iw;
      return inter / (area_a + area_b - inter) > iou_th;
    };
    std::vector<int64_t> selected;
    std::vector<int64_t> cand;
    std::vector<double> sc(static_cast<size_t>(nbox));
    for (int64_t b = 0; b < nb && max_out > 0; ++b) {
      for (int64_t c = 0; c < nc; ++c) {
        cand.clear();
        for (int64_t i = 0; i < nbox; ++i) {
          sc[i] = scores_t.ElementAsDouble((b * nc + c) * nbox + i);
          if (!has_score_th || sc[i] > score_th) cand.push_back(i);
        }
        std::stable_sort(cand.begin(), cand.end(),
                         [&](int64_t p, int64_t q) { return sc[p] > sc[q]; });
        std::vector<int64_t> kept;
        for (int64_t i : cand) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          const double* bi = &corners[(b * nbox + i) * 4];
          bool drop = false;
          for (int64_t k : kept)
            if (suppress(bi, &corners[(b * nbox + k) * 4])) { drop = true; break; }
          if (drop) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    Tensor& out = ctx.AllocateOutput(0, DataType::kInt64,
                                     {static_cast<int64_t>(selected.size() / 3), 3});
    std::copy(selected.begin(), selected.end(), out.data<int64_t>());
    return absl::OkStatus();
  }

 private:
  int64_t center_point_box_;
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

// ------------------------------------------------------------------ Quantization
// Scale / zero point as a per-tensor scalar, a 1-D per-axis vector, or (opset 21,
// block_size > 0) a tensor of the input's rank whose `axis` dim counts blocks of
// block_size consecutive elements.
struct QuantParams {
  int64_t axis_dim = 1, inner = 1;  // size of the quantized axis and of the dims after it
  int64_t block = 0, blocks = 1;    // block_size and the scale's dim on the axis (blocked)
  std::vector<double> scale;
  std::vector<double> zero;  // as values (float4 zero points are not integers)
  size_t At(int64_t i) const {
    if (scale.size() == 1) return 0;
    const int64_t a = (i / inner) % axis_dim;
    if (!block) return static_cast<size_t>(a);
    const int64_t outer = i / (inner * axis_dim);
    return static_cast<size_t>((outer * blocks + a / block) * inner + i % inner);
  }
};

absl::StatusOr<QuantParams> ReadQuantParams(const Tensor& x, const Tensor* scale, const Tensor* zp,
                                            int64_t axis_attr, int64_t block_size, int opset) {
  if (!scale) return absl::InvalidArgumentError("missing scale input");
  QuantParams q;
  const bool per_tensor = scale->numel() == 1 && scale->rank() <= 1;
  if (!per_tensor || block_size > 0) {
    if (opset < 13 || (block_size <= 0 && scale->rank() != 1))
      return absl::InvalidArgumentError("scale must be a scalar or a 1-D per-axis tensor, got " +
                                        DimsToString(scale->dims()));
    auto a = NormalizeAxis(axis_attr, x.rank());
    if (!a.ok()) return a.status();
    q.axis_dim = x.dim(*a);
    q.inner = DimProduct(x.dims(), *a + 1, x.rank());
    if (block_size > 0) {
      q.block = block_size;
      q.blocks = (q.axis_dim + block_size - 1) / block_size;
      Dims want = x.dims();
      want[*a] = q.blocks;
      if (scale->dims() != want)
        return absl::InvalidArgumentError("blocked scale " + DimsToString(scale->dims()) + " must be " +
                                          DimsToString(want) + " (block_size " + std::to_string(block_size) +
                                          " on axis " + std::to_string(*a) + ")");
    } else if (scale->dim(0) != q.axis_dim) {
      return absl::InvalidArgumentError("scale has " + std::to_string(scale->dim(0)) +
                                        " values but axis " + std::to_string(*a) +
                                        " of input has size " + std::to_string(q.axis_dim));
    }
  }
  for (int64_t i = 0; i < scale->numel(); ++i) q.scale.push_back(scale->ElementAsDouble(i));
  if (zp) {
    if (zp->dims() != scale->dims() && !(zp->numel() == 1 && scale->numel() == 1))
      return absl::InvalidArgumentError("zero point shape " + DimsToString(zp->dims()) +
                                        " differs from scale shape " +
                                        DimsToString(scale->dims()));
    for (int64_t i = 0; i < zp->numel(); ++i) q.zero.push_back(zp->ElementAsDouble(i));
  } else {
    q.zero.assign(q.scale.size(), 0);
  }
  return q;
}

// The integer range of a quantized type, or false for a type QuantizeLinear cannot write.
bool QuantRange(DataType t, double* lo, double* hi) {
  switch (t) {
    case DataType::kUint8: *lo = 0; *hi = 255; return true;
    case DataType::kInt8: *lo = -128; *hi = 127; return true;
    case DataType::kUint16: *lo = 0; *hi = 65535; return true;
    case DataType::kInt16: *lo = -32768; *hi = 32767; return true;
    case DataType::kUint4: *lo = 0; *hi = 15; return true;
    case DataType::kInt4: *lo = -8; *hi = 7; return true;
    case DataType::kUint2: *lo = 0; *hi = 3; return true;
    case DataType::kInt2: *lo = -2; *hi = 1; return true;
    default: return false;
  }
}

// Opset 21 added block_size and output_dtype (the type when no zero point is given), and
// 16-bit and narrow types: integers round, add the zero point and clip; float8 converts
// x / scale (zero point ignored, as onnx's reference) saturating unless saturate=0;
// float4 converts x / scale + zero point, saturating.
class QuantizeLinear : public Kernel {
 public:
  explicit QuantizeLinear(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.node.attr_int("axis", 1)),
        block_size_(info.node.attr_int("block_size", 0)),
        saturate_(info.node.attr_int("saturate", 1) != 0),
        output_dtype_(static_cast<DataType>(info.node.attr_int("output_dtype", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* zp = ctx.input(2);
    if (zp && output_dtype_ != DataType::kUndefined && zp->dtype() != output_dtype_)
      return absl::InvalidArgumentError("output_dtype differs from the zero point's type");
    const DataType yt = zp ? zp->dtype() : output_dtype_ != DataType::kUndefined ? output_dtype_ : DataType::kUint8;
    double lo = 0, hi = 0;
    const bool to_float = IsLowPrecisionFloat(yt) && yt != DataType::kFloat8E8M0;
    if (!to_float && !QuantRange(yt, &lo, &hi))
      return absl::InvalidArgumentError(std::string("unsupported output type ") + DataTypeName(yt) +
                                        " (8- and 16-bit integers, int4/uint4/int2/uint2, float8 and float4 are "
                                        "supported)");
    auto q = ReadQuantParams(x, ctx.input(1), zp, axis_, block_size_, opset_);
    if (!q.ok()) return q.status();
    Tensor& y = ctx.AllocateOutput(0, yt, x.dims());
    const int64_t n = x.numel();
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      auto quotient = [&](int64_t i, size_t p) -> double {  // x / scale
        if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) return ToD(in[i]) / q->scale[p];
        else return static_cast<float>(in[i]) / static_cast<float>(q->scale[p]);  // as the reference
      };
      // The clipped integer level of element i.
      auto level = [&](int64_t i) {
        const size_t p = q->At(i);
        return std::min(hi, std::max(lo, std::nearbyint(quotient(i, p)) + q->zero[p]));
      };
      if (to_float) {
        const bool add_zero = yt == DataType::kFloat4E2M1;
        for (int64_t i = 0; i < n; ++i) {
          const size_t p = q->At(i);
          y.data<uint8_t>()[i] = LowPrecisionFromDouble(yt, quotient(i, p) + (add_zero ? q->zero[p] : 0.0), saturate_);
        }
      } else if (IsLowPrecision(yt)) {  // int4/uint4/int2/uint2: one value per byte
        for (int64_t i = 0; i < n; ++i) y.data<uint8_t>()[i] = static_cast<uint8_t>(static_cast<int8_t>(level(i)));
      } else {
        VisitNumericType(yt, [&](auto otag) {
          using O = decltype(otag);
          if constexpr (std::is_integral_v<O>)
            for (int64_t i = 0; i < n; ++i) y.data<O>()[i] = static_cast<O>(level(i));
        });
      }
    });
    return absl::OkStatus();
  }

 private:
  int opset_;
  int64_t axis_, block_size_;
  bool saturate_;
  DataType output_dtype_;
};

// Float8 and float4 inputs ignore the zero point, as onnx's reference does.
class DequantizeLinear : public Kernel {
 public:
  explicit DequantizeLinear(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.node.attr_int("axis", 1)),
        block_size_(info.node.attr_int("block_size", 0)),
        output_dtype_(static_cast<DataType>(info.node.attr_int("output_dtype", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (zp && zp->dtype() != x.dtype())
      return absl::InvalidArgumentError("zero point type differs from input type");
    auto q = ReadQuantParams(x, scale, zp, axis_, block_size_, opset_);
    if (!q.ok()) return q.status();
    DataType yt = scale->dtype();
    if (!IsFloatingPoint(yt)) return absl::InvalidArgumentError("scale must be a float tensor");
    if (output_dtype_ != DataType::kUndefined && output_dtype_ != yt)
      return absl::InvalidArgumentError(std::string("output_dtype ") + DataTypeName(output_dtype_) +
                                        " differs from the scale's type " + DataTypeName(yt));
    Tensor& y = ctx.AllocateOutput(0, yt, x.dims());
    const bool float_input = IsLowPrecisionFloat(x.dtype());
    VisitNumericType(yt, [&](auto otag) {
      using O = decltype(otag);
      O* out = y.data<O>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        size_t p = q->At(i);
        const double v = x.ElementAsDouble(i) - (float_input ? 0.0 : q->zero[p]);
        if constexpr (std::is_same_v<O, double>)
          out[i] = static_cast<double>(v) * q->scale[p];
        else
          out[i] = static_cast<O>(static_cast<float>(v) * static_cast<float>(q->scale[p]));
      }
    });
    return absl::OkStatus();
  }

 private:
  int opset_;
  int64_t axis_, block_size_;
  DataType output_dtype_;
};

class DynamicQuantizeLinear : public Kernel {
 public:
  explicit DynamicQuantizeLinear(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const float* in = x.data<float>();
    float mn = 0.f, mx = 0.f;
    for (int64_t i = 0; i < x.numel(); ++i) {
      mn = std::min(mn, in[i]);
      mx = std::max(mx, in[i]);
    }
    float scale = (mx - mn) / 255.f;
    float zpf = scale == 0.f ? 0.f : std::nearbyint((0.f - mn) / scale);
    uint8_t zp = static_cast<uint8_t>(std::min(255.f, std::max(0.f, zpf)));
    Tensor& y = ctx.AllocateOutput(0, DataType::kUint8, x.dims());
    uint8_t* out = y.data<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      float v = scale == 0.f ? 0.f : std::nearbyint(in[i] / scale);
      out[i] = static_cast<uint8_t>(std::min(255.f, std::max(0.f, v + zp)));
    }
    ctx.AllocateOutput(1, DataType::kFloat, {}).data<float>()[0] = scale;
    ctx.AllocateOutput(2, DataType::kUint8, {}).data<uint8_t>()[0] = zp;
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
  r.Add("NonMaxSuppression", 10, kMaxOpset, types::kFloat, Make<NonMaxSuppression>());
  r.Add("MaxUnpool", 9, 10, types::kFloats, Make<MaxUnpool>());
  r.Add("MaxUnpool", 11, kMaxOpset, types::kFloats, Make<MaxUnpool>());
  r.Add("Det", 11, kMaxOpset, types::kFloats, Make<Det>());
  const std::vector<DT> q_in = {DT::kFloat, DT::kInt32, DT::kFloat16, DT::kBfloat16,
                                DT::kDouble};
  r.Add("QuantizeLinear", 10, 12, q_in, Make<QuantizeLinear>());
  r.Add("QuantizeLinear", 13, 20, q_in, Make<QuantizeLinear>());
  r.Add("QuantizeLinear", 21, kMaxOpset, q_in, Make<QuantizeLinear>());
  const std::vector<DT> dq_in = {DT::kInt8, DT::kUint8, DT::kInt32};
  r.Add("DequantizeLinear", 10, 12, dq_in, Make<DequantizeLinear>());
  r.Add("DequantizeLinear", 13, 20, dq_in, Make<DequantizeLinear>());
  const std::vector<DT> dq_in_21 = {DT::kInt8,         DT::kUint8,          DT::kInt16,       DT::kUint16,
                                    DT::kInt32,        DT::kFloat8E4M3FN,   DT::kFloat8E4M3FNUZ,
                                    DT::kFloat8E5M2,   DT::kFloat8E5M2FNUZ, DT::kUint4,       DT::kInt4,
                                    DT::kFloat4E2M1,   DT::kUint2,          DT::kInt2};
  r.Add("DequantizeLinear", 21, kMaxOpset, dq_in_21, Make<DequantizeLinear>());
  r.Add("DynamicQuantizeLinear", 11, kMaxOpset, types::kFloat, Make<DynamicQuantizeLinear>());
}

}  // namespace tandem::cpu
