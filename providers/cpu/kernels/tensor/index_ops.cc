// Indexing kernels: Gather, GatherElements, GatherND, Scatter / ScatterElements,
// ScatterND (with reductions), Compress, NonZero, OneHot and EyeLike. Negative indices
// wrap; out-of-range indices are reported as errors.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

// Viewing x as [outer, n, inner]: y[o, i, :] = x[o, index[i], :] (indices already checked).
void TakeSlices(const Tensor& x, const std::vector<int64_t>& index, int64_t outer, int64_t n,
                int64_t inner, Tensor& y) {
  const int64_t k = static_cast<int64_t>(index.size());
  VisitElementWidth(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < k; ++i)
        std::copy_n(src + (o * n + index[i]) * inner, inner, dst + (o * k + i) * inner);
  });
}

absl::Status Missing(const char* what) {
  return absl::InvalidArgumentError(std::string("missing required input '") + what + "'");
}

absl::Status IndexError(int64_t idx, int64_t dim, const std::string& where) {
  return absl::InvalidArgumentError("index " + std::to_string(idx) + " is out of range [" +
                                    std::to_string(-dim) + ", " + std::to_string(dim - 1) + "]" +
                                    where);
}

// Reads integer indices, wraps negatives against `dim` and checks the range.
absl::Status ReadIndices(const Tensor& t, int64_t dim, std::vector<int64_t>* out) {
  *out = ReadInt64s(t);
  for (int64_t& i : *out) {
    const int64_t v = i < 0 ? i + dim : i;
    if (v < 0 || v >= dim) return IndexError(i, dim, " of axis with size " + std::to_string(dim));
    i = v;
  }
  return absl::OkStatus();
}

// Calls f(T{}) for numeric types, bool and std::string.
template <typename F>
bool VisitAllTypes(DataType dtype, F&& f) {
  if (dtype == DataType::kString) {
    f(std::string{});
    return true;
  }
  return VisitNumericType(dtype, f);
}

// ---------------------------------------------------------------------------------------
// Gather family

class Gather : public Kernel {
 public:
  explicit Gather(const KernelInfo& info) : axis_(info.node.attr_int("axis", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    if (!x) return Missing("data");
    if (!ind) return Missing("indices");
    if (x->rank() == 0) return absl::InvalidArgumentError("data must have rank >= 1");
    auto axis_or = NormalizeAxis(axis_, x->rank());
    if (!axis_or.ok()) return axis_or.status();
    const int axis = *axis_or;
    const int64_t n = x->dim(axis);
    std::vector<int64_t> idx;
    if (auto s = ReadIndices(*ind, n, &idx); !s.ok()) return s;
    Dims out(x->dims().begin(), x->dims().begin() + axis);
    out.insert(out.end(), ind->dims().begin(), ind->dims().end());
    out.insert(out.end(), x->dims().begin() + axis + 1, x->dims().end());
    const int64_t outer = DimProduct(x->dims(), 0, axis);
    const int64_t inner = DimProduct(x->dims(), axis + 1, x->rank());
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), out);
    if (y.numel() == 0) return absl::OkStatus();
    TakeSlices(*x, idx, outer, n, inner, y);
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

// Checks that `ind` has the rank of `data` and fits inside it on every axis but `axis`.
absl::Status CheckElementsShape(const Tensor& data, const Tensor& ind, int axis) {
  bool ok = ind.rank() == data.rank();
  for (int d = 0; ok && d < data.rank(); ++d) ok = d == axis || ind.dim(d) <= data.dim(d);
  if (!ok)
    return absl::InvalidArgumentError("indices of shape " + DimsToString(ind.dims()) +
                                      " do not fit data of shape " + DimsToString(data.dims()) +
                                      " on axis " + std::to_string(axis));
  return absl::OkStatus();
}

// Calls f(i, data_offset) for every element i of `ind`, where data_offset locates the same
// coordinates in `data` with the `axis` coordinate replaced by the (checked) index value.
template <typename F>
absl::Status ForEachElementIndex(const Tensor& data, const Tensor& ind, int axis, F&& f) {
  const std::vector<int64_t> idx = ReadInt64s(ind);
  const std::vector<int64_t> ds = Strides(data.dims());
  const int r = ind.rank();
  const int64_t n = data.dim(axis);
  std::vector<int64_t> pos(r, 0);
  int64_t base = 0;  // offset of pos in data, without the axis coordinate
  for (int64_t i = 0; i < static_cast<int64_t>(idx.size()); ++i) {
    int64_t v = idx[i] < 0 ? idx[i] + n : idx[i];
    if (v < 0 || v >= n) return IndexError(idx[i], n, " on axis " + std::to_string(axis));
    f(i, base + v * ds[axis]);
    for (int d = r - 1; d >= 0; --d) {
      if (d != axis) base += ds[d];
      if (++pos[d] < ind.dim(d)) break;
      if (d != axis) base -= ds[d] * pos[d];
      pos[d] = 0;
    }
  }
  return absl::OkStatus();
}

// Whether `ind` has data's dims on every axis but `axis`: then element (o, j, k) of `ind` (o
// over the axes before `axis`, k over those after) addresses data at (o * n + index) * inner + k.
bool MatchesOffAxis(const Tensor& data, const Tensor& ind, int axis) {
  for (int d = 0; d < data.rank(); ++d)
    if (d != axis && ind.dim(d) != data.dim(d)) return false;
  return true;
}

// ForEachElementIndex where MatchesOffAxis holds, without decomposing coordinates: calls
// run(i, off, count) for `count` consecutive elements i.. of `ind` that all hold one index and
// so address data[off, off + count) (an Expand of one index per slice, as torchvision's merge
// of RoI levels writes it), and f(i, off) for each element of a run whose indices differ.
template <typename Index, typename F, typename Run>
absl::Status ForEachIndexRun(const Tensor& data, const Tensor& ind, int axis, F&& f, Run&& run) {
  const Index* idx = ind.data<Index>();
  const int64_t n = data.dim(axis), m = ind.dim(axis);
  const int64_t outer = DimProduct(data.dims(), 0, axis);
  const int64_t inner = DimProduct(data.dims(), axis + 1, data.rank());
  if (inner == 0) return absl::OkStatus();
  auto checked = [&](int64_t raw, int64_t* v) {
    *v = raw < 0 ? raw + n : raw;
    return *v >= 0 && *v < n ? absl::OkStatus() : IndexError(raw, n, " on axis " + std::to_string(axis));
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j) {
      const int64_t i0 = (o * m + j) * inner;
      const Index* r = idx + i0;
      const bool uniform = std::all_of(r, r + inner, [&](Index v) { return v == r[0]; });
      int64_t v = 0;
      if (uniform) {
        if (auto s = checked(r[0], &v); !s.ok()) return s;
        run(i0, (o * n + v) * inner, inner);
        continue;
      }
      for (int64_t k = 0; k < inner; ++k) {
        if (auto s = checked(r[k], &v); !s.ok()) return s;
        f(i0 + k, (o * n + v) * inner + k);
      }
    }
  return absl::OkStatus();
}

// ForEachIndexRun for int32 or int64 indices of that shape, else ForEachElementIndex (which
// calls run's per-element form f for every element).
template <typename F, typename Run>
absl::Status ForEachIndexOrRun(const Tensor& data, const Tensor& ind, int axis, F&& f, Run&& run) {
  if (MatchesOffAxis(data, ind, axis)) {
    if (ind.dtype() == DataType::kInt64) return ForEachIndexRun<int64_t>(data, ind, axis, f, run);
    if (ind.dtype() == DataType::kInt32) return ForEachIndexRun<int32_t>(data, ind, axis, f, run);
  }
  return ForEachElementIndex(data, ind, axis, f);
}

class GatherElements : public Kernel {
 public:
  explicit GatherElements(const KernelInfo& info) : axis_(info.node.attr_int("axis", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    if (!x) return Missing("data");
    if (!ind) return Missing("indices");
    if (x->rank() == 0) return absl::InvalidArgumentError("data must have rank >= 1");
    auto axis_or = NormalizeAxis(axis_, x->rank());
    if (!axis_or.ok()) return axis_or.status();
    if (auto s = CheckElementsShape(*x, *ind, *axis_or); !s.ok()) return s;
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), ind->dims());
    absl::Status st;
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y.data<T>();
      st = ForEachIndexOrRun(
          *x, *ind, *axis_or, [&](int64_t i, int64_t off) { dst[i] = src[off]; },
          [&](int64_t i, int64_t off, int64_t count) { std::copy_n(src + off, count, dst + i); });
    });
    return st;
  }

 private:
  int64_t axis_;
};

// Shared checks of GatherND / ScatterND: index tuples of length k address data dims
// [b, b+k); returns the data offset of every tuple in *offsets.
absl::Status IndexTuples(const Tensor& data, const Tensor& ind, int b, std::vector<int64_t>* offsets,
                         int64_t* slice) {
  const int r = data.rank(), q = ind.rank();
  if (q < 1) return absl::InvalidArgumentError("indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q))
    return absl::InvalidArgumentError("batch_dims " + std::to_string(b) +
                                      " must be less than the ranks of data and indices");
  const int64_t k = ind.dim(-1);
  if (k < 1 || k > r - b)
    return absl::InvalidArgumentError("last dim of indices (" + std::to_string(k) +
                                      ") must be in [1, " + std::to_string(r - b) + "]");
  for (int d = 0; d < b; ++d)
    if (data.dim(d) != ind.dim(d))
      return absl::InvalidArgumentError("batch dims of data " + DimsToString(data.dims()) +
                                        " and indices " + DimsToString(ind.dims()) + " differ");
  std::vector<int64_t> converted;  // int64 indices are read in place
  if (ind.dtype() != DataType::kInt64) converted = ReadInt64s(ind);
  const int64_t* idx = converted.empty() ? ind.data<int64_t>() : converted.data();
  const std::vector<int64_t> ds = Strides(data.dims());
  *slice = DimProduct(data.dims(), b + static_cast<int>(k), r);
  const int64_t batches = DimProduct(data.dims(), 0, b);
  const int64_t tuples = ind.numel() / k;
  const int64_t per_batch = batches ? tuples / batches : 0;
  const int64_t batch_stride = DimProduct(data.dims(), b, r);
  offsets->resize(tuples);
  for (int64_t t0 = 0, batch = 0; per_batch > 0 && t0 < tuples; t0 += per_batch, ++batch)
    for (int64_t t = t0; t < t0 + per_batch; ++t) {
      int64_t off = batch * batch_stride;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dim = data.dim(b + static_cast<int>(j));
        int64_t v = idx[t * k + j];
        if (v < 0) v += dim;
        if (v < 0 || v >= dim) return IndexError(idx[t * k + j], dim, " on data axis " + std::to_string(b + j));
        off += v * ds[b + j];
      }
      (*offsets)[t] = off;
    }
  return absl::OkStatus();
}

class GatherND : public Kernel {
 public:
  explicit GatherND(const KernelInfo& info) : batch_dims_(info.node.attr_int("batch_dims", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    if (!x) return Missing("data");
    if (!ind) return Missing("indices");
    std::vector<int64_t> offsets;
    int64_t slice = 0;
    const int b = static_cast<int>(batch_dims_);
    if (auto s = IndexTuples(*x, *ind, b, &offsets, &slice); !s.ok()) return s;
    Dims out(ind->dims().begin(), ind->dims().end() - 1);
    out.insert(out.end(), x->dims().begin() + b + ind->dim(-1), x->dims().end());
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), out);
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y.data<T>();
      if (slice == 1) {  // one element per tuple (a detector's scores picked by NonZero)
        for (size_t t = 0; t < offsets.size(); ++t) dst[t] = src[offsets[t]];
        return;
      }
      for (size_t t = 0; t < offsets.size(); ++t) std::copy_n(src + offsets[t], slice, dst + t * slice);
    });
    return absl::OkStatus();
  }

 private:
  int64_t batch_dims_;
};

// ---------------------------------------------------------------------------------------
// Scatter family

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

absl::StatusOr<Reduction> ParseReduction(const std::string& s, int opset) {
  if (s == "none") return Reduction::kNone;
  if (opset >= 16 && s == "add") return Reduction::kAdd;
  if (opset >= 16 && s == "mul") return Reduction::kMul;
  if (opset >= 18 && s == "max") return Reduction::kMax;
  if (opset >= 18 && s == "min") return Reduction::kMin;
  return absl::InvalidArgumentError("unsupported reduction '" + s + "' at opset " + std::to_string(opset));
}

template <typename T>
void Combine(T& dst, const T& v, Reduction r) {
  if constexpr (std::is_same_v<T, std::string>) {
    dst = v;
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case Reduction::kNone: dst = v; break;
      case Reduction::kAdd: case Reduction::kMax: dst = dst || v; break;
      case Reduction::kMul: case Reduction::kMin: dst = dst && v; break;
    }
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    float d = static_cast<float>(dst);
    Combine(d, static_cast<float>(v), r);
    dst = r == Reduction::kNone ? v : T(d);
  } else {
    switch (r) {
      case Reduction::kNone: dst = v; break;
      case Reduction::kAdd: dst = static_cast<T>(dst + v); break;
      case Reduction::kMul: dst = static_cast<T>(dst * v); break;
      case Reduction::kMax: dst = std::max(dst, v); break;
      case Reduction::kMin: dst = std::min(dst, v); break;
    }
  }
}

class ScatterElements : public Kernel {
 public:
  explicit ScatterElements(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", 0)),
        reduction_(ParseReduction(info.node.attr_string("reduction", "none"), info.opset)) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (!reduction_.ok()) return reduction_.status();
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    const Tensor* upd = ctx.input(2);
    if (!x) return Missing("data");
    if (!ind) return Missing("indices");
    if (!upd) return Missing("updates");
    if (x->rank() == 0) return absl::InvalidArgumentError("data must have rank >= 1");
    auto axis_or = NormalizeAxis(axis_, x->rank());
    if (!axis_or.ok()) return axis_or.status();
    if (auto s = CheckElementsShape(*x, *ind, *axis_or); !s.ok()) return s;
    if (upd->dims() != ind->dims() || upd->dtype() != x->dtype())
      return absl::InvalidArgumentError("updates of shape " + DimsToString(upd->dims()) +
                                        " must match indices of shape " + DimsToString(ind->dims()) +
                                        " and have the data type");
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), x->dims());
    absl::Status st;
    const Reduction red = *reduction_;
    bool ok = VisitAllTypes(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::copy_n(x->data<T>(), x->numel(), y.data<T>());
      const T* u = upd->data<T>();
      T* dst = y.data<T>();
      auto one = [&](int64_t i, int64_t off) { Combine(dst[off], u[i], red); };
      st = ForEachIndexOrRun(*x, *ind, *axis_or, one, [&](int64_t i, int64_t off, int64_t count) {
        if (red == Reduction::kNone) {
          std::copy_n(u + i, count, dst + off);
          return;
        }
        for (int64_t k = 0; k < count; ++k) one(i + k, off + k);
      });
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return st;
  }

 private:
  int64_t axis_;
  absl::StatusOr<Reduction> reduction_;
};

class ScatterND : public Kernel {
 public:
  explicit ScatterND(const KernelInfo& info)
      : reduction_(ParseReduction(info.node.attr_string("reduction", "none"), info.opset)) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (!reduction_.ok()) return reduction_.status();
    const Tensor* x = ctx.input(0);
    const Tensor* ind = ctx.input(1);
    const Tensor* upd = ctx.input(2);
    if (!x) return Missing("data");
    if (!ind) return Missing("indices");
    if (!upd) return Missing("updates");
    if (x->rank() == 0) return absl::InvalidArgumentError("data must have rank >= 1");
    std::vector<int64_t> offsets;
    int64_t slice = 0;
    if (auto s = IndexTuples(*x, *ind, 0, &offsets, &slice); !s.ok()) return s;
    Dims expect(ind->dims().begin(), ind->dims().end() - 1);
    expect.insert(expect.end(), x->dims().begin() + ind->dim(-1), x->dims().end());
    if (upd->dims() != expect || upd->dtype() != x->dtype())
      return absl::InvalidArgumentError("updates have shape " + DimsToString(upd->dims()) +
                                        ", expected " + DimsToString(expect) + " of the data type");
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), x->dims());
    const Reduction red = *reduction_;
    bool ok = VisitAllTypes(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::copy_n(x->data<T>(), x->numel(), y.data<T>());
      const T* u = upd->data<T>();
      T* dst = y.data<T>();
      for (size_t t = 0; t < offsets.size(); ++t)
        for (int64_t j = 0; j < slice; ++j) Combine(dst[offsets[t] + j], u[t * slice + j], red);
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<Reduction> reduction_;
};

// ---------------------------------------------------------------------------------------
// Compress, NonZero, OneHot, EyeLike

class Compress : public Kernel {
 public:
  explicit Compress(const KernelInfo& info)
      : has_axis_(info.node.has_attr("axis")), axis_(info.node.attr_int("axis", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* cond = ctx.input(1);
    if (!x) return Missing("input");
    if (!cond) return Missing("condition");
    if (cond->rank() != 1) return absl::InvalidArgumentError("condition must be 1-D");
    Dims shape = x->dims();
    int axis = 0;
    if (has_axis_) {
      if (x->rank() == 0) return absl::InvalidArgumentError("input must have rank >= 1 with an axis");
      auto a = NormalizeAxis(axis_, x->rank());
      if (!a.ok()) return a.status();
      axis = *a;
    } else {
      shape = {x->numel()};
    }
    const int64_t n = shape[axis];
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond->numel(); ++i) {
      if (cond->ElementAsDouble(i) == 0) continue;
      if (i >= n)
        return absl::InvalidArgumentError("condition selects index " + std::to_string(i) +
                                          " beyond axis size " + std::to_string(n));
      keep.push_back(i);
    }
    const int64_t outer = DimProduct(shape, 0, axis);
    const int64_t inner = DimProduct(shape, axis + 1, static_cast<int>(shape.size()));
    Dims out = shape;
    out[axis] = static_cast<int64_t>(keep.size());
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), out);
    TakeSlices(*x, keep, outer, n, inner, y);
    return absl::OkStatus();
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return static_cast<float>(v) != 0.f;
  else
    return v != T(0);
}

// NonZero: [rank, count] int64 coordinates in row-major order (a scalar counts as 1-D).
class NonZero : public Kernel {
 public:
  explicit NonZero(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("X");
    const Dims dims = x->rank() == 0 ? Dims{1} : x->dims();
    const int r = static_cast<int>(dims.size());
    // Counted first, then each hit's coordinates written from a running position (no
    // division per element: a detector's score mask has millions).
    bool ok = VisitNumericType(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = x->data<T>();
      const int64_t n = x->numel();
      int64_t nnz = 0;
      for (int64_t i = 0; i < n; ++i) nnz += IsNonZero(p[i]);
      Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {r, nnz});
      int64_t* out = y.data<int64_t>();
      if (r == 1) {
        for (int64_t i = 0, j = 0; i < n; ++i)
          if (IsNonZero(p[i])) out[j++] = i;
        return;
      }
      std::vector<int64_t> pos(r, 0);
      for (int64_t i = 0, j = 0; i < n; ++i) {
        if (IsNonZero(p[i])) {
          for (int d = 0; d < r; ++d) out[d * nnz + j] = pos[d];
          ++j;
        }
        for (int d = r - 1; d >= 0 && ++pos[d] == dims[d]; --d) pos[d] = 0;
      }
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return absl::OkStatus();
  }
};

// OneHot: inserts a depth axis at `axis`; values = [off, on]. Indices outside
// [-depth, depth-1] give an all-off row, as the spec says.
class OneHot : public Kernel {
 public:
  explicit OneHot(const KernelInfo& info) : axis_(info.node.attr_int("axis", -1)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* ind = ctx.input(0);
    const Tensor* depth_t = ctx.input(1);
    const Tensor* values = ctx.input(2);
    if (!ind) return Missing("indices");
    if (!depth_t) return Missing("depth");
    if (!values) return Missing("values");
    if (depth_t->numel() != 1) return absl::InvalidArgumentError("depth must be a scalar");
    if (values->numel() != 2) return absl::InvalidArgumentError("values must hold [off_value, on_value]");
    const double depth_d = depth_t->ElementAsDouble(0);
    if (!(depth_d >= 1 && depth_d < 9.0e15))
      return absl::InvalidArgumentError("depth must be positive, got " + std::to_string(depth_d));
    const int64_t depth = static_cast<int64_t>(depth_d);
    if (depth < 1) return absl::InvalidArgumentError("depth must be positive, got " + std::to_string(depth));
    const int r = ind->rank() + 1;
    int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    if (axis < 0 || axis >= r)
      return absl::InvalidArgumentError("axis " + std::to_string(axis_) +
                                        " is out of range for output rank " + std::to_string(r));
    Dims out = ind->dims();
    out.insert(out.begin() + axis, depth);
    const int64_t outer = DimProduct(ind->dims(), 0, static_cast<int>(axis));
    const int64_t inner = DimProduct(ind->dims(), static_cast<int>(axis), ind->rank());
    std::vector<int64_t> idx(static_cast<size_t>(ind->numel()));
    for (int64_t i = 0; i < ind->numel(); ++i) {
      const double dv = ind->ElementAsDouble(i);
      int64_t v = std::abs(dv) < 9.0e15 ? static_cast<int64_t>(dv) : -2 * depth;
      if (v < 0) v += depth;
      idx[i] = v >= 0 && v < depth ? v : -1;
    }
    if (auto st = CheckOutputDims(out); !st.ok()) return st;
    Tensor& y = ctx.AllocateOutput(0, values->dtype(), out);
    VisitElementWidth(values->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T off = values->data<T>()[0], on = values->data<T>()[1];
      T* dst = y.data<T>();
      std::fill_n(dst, y.numel(), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t v = idx[o * inner + i];
          if (v >= 0) dst[(o * depth + v) * inner + i] = on;
        }
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

class EyeLike : public Kernel {
 public:
  explicit EyeLike(const KernelInfo& info)
      : dtype_(static_cast<int32_t>(info.node.attr_int("dtype", 0))), k_(info.node.attr_int("k", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("input");
    if (x->rank() != 2) return absl::InvalidArgumentError("input must be 2-D, got " + DimsToString(x->dims()));
    DataType dt = x->dtype();
    if (dtype_ != 0) {
      if (!IsKnownDataType(dtype_)) return absl::InvalidArgumentError("unknown dtype " + std::to_string(dtype_));
      dt = static_cast<DataType>(dtype_);
    }
    Tensor& y = ctx.AllocateOutput(0, dt, x->dims());
    const int64_t rows = x->dim(0), cols = x->dim(1);
    bool ok = VisitNumericType(dt, [&](auto tag) {
      using T = decltype(tag);
      T* dst = y.data<T>();
      T zero{}, one{};
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        zero = T(0.f);
        one = T(1.f);
      } else {
        zero = T(0);
        one = T(1);
      }
      std::fill_n(dst, y.numel(), zero);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k_;
        if (j >= 0 && j < cols) dst[i * cols + j] = one;
      }
    });
    if (!ok) return absl::InvalidArgumentError(std::string("unsupported dtype ") + DataTypeName(dt));
    return absl::OkStatus();
  }

 private:
  int32_t dtype_;
  int64_t k_;
};

}  // namespace

void RegisterIndexKernels(KernelRegistry& r) {
  const auto& all = types::kAll;
  std::vector<DataType> numeric_bool = types::kNumeric;
  numeric_bool.push_back(DataType::kBool);
  r.Add("Gather", 1, kMaxOpset, all, Make<Gather>());
  r.Add("GatherElements", 11, kMaxOpset, all, Make<GatherElements>());
  r.Add("GatherND", 11, kMaxOpset, all, Make<GatherND>());            // batch_dims from 12
  r.Add("Scatter", 9, kMaxOpset, all, Make<ScatterElements>());       // deprecated alias
  r.Add("ScatterElements", 11, kMaxOpset, all, Make<ScatterElements>());  // add/mul 16, max/min 18
  r.Add("ScatterND", 11, kMaxOpset, all, Make<ScatterND>());          // add/mul 16, max/min 18
  r.Add("Compress", 9, kMaxOpset, all, Make<Compress>());
  r.Add("NonZero", 9, kMaxOpset, numeric_bool, Make<NonZero>());
  r.Add("OneHot", 9, kMaxOpset, types::kNumeric, Make<OneHot>());
  r.Add("EyeLike", 9, kMaxOpset, numeric_bool, Make<EyeLike>());
}

}  // namespace tandem::cpu
