// Shared machinery of the elementwise kernel files (unary, binary, variadic, reduce):
// float16/bfloat16 compute types, row-wise broadcast iteration, the
// pre-opset-7 `broadcast`/`axis` attributes and cached oneDNN eltwise/binary runners.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/node.h"
#include "graph/numeric_cast.h"
#include "graph/tensor.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

// Arithmetic type used for element type T (half types compute through float).
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<Float16> { using type = float; };
template <> struct ComputeOf<BFloat16> { using type = float; };
template <typename T> using ComputeT = typename ComputeOf<T>::type;

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsFloatLike = std::is_floating_point_v<T> || kIsHalf<T>;
template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Converts a computed value back to element type T (float -> integer saturates, NaN -> 0:
// graph/numeric_cast.h).
template <typename T, typename C>
inline T FromCompute(C v) {
  if constexpr (kIsHalf<T>) return T(static_cast<float>(v));
  else return NumericCast<T>(v);
}

// Returns f(T{}) (an absl::Status) for float, double, float16 and bfloat16; for other
// types an error naming input `what`.
template <typename F>
absl::Status VisitFloatLike(DataType dtype, const char* what, F&& f) {
  absl::Status s = absl::InvalidArgumentError(std::string(what) + " must be float, double, float16 or bfloat16, got " +
                                              DataTypeName(dtype));
  VisitNumericType(dtype, [&](auto tag) {
    if constexpr (kIsFloatLike<decltype(tag)>) s = f(tag);
  });
  return s;
}

// NaN test that compiles (as false) for integer types.
template <typename V>
inline bool IsNan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

// Row-wise iteration of an output shape over k broadcast inputs. Dims are collapsed so
// the innermost row is as long as possible; inside a row each input advances by its
// step (0 = broadcast, 1 = contiguous). At most 8 inputs.
class BroadcastRows {
 public:
  BroadcastRows(const Dims& out, const std::vector<Dims>& ins) {
    const size_t k = ins.size();
    std::vector<std::vector<int64_t>> st;
    for (const Dims& d : ins) st.push_back(BroadcastStrides(d, out));
    // Collapse: drop size-1 dims, merge neighbours that stay contiguous for every input.
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d] == 1) continue;
      bool merge = !dims_.empty();
      for (size_t j = 0; merge && j < k; ++j)
        merge = strides_[j].back() == st[j][d] * out[d];
      if (merge) {
        dims_.back() *= out[d];
        for (size_t j = 0; j < k; ++j) strides_[j].back() = st[j][d];
      } else {
        if (dims_.empty()) strides_.assign(k, {});
        dims_.push_back(out[d]);
        for (size_t j = 0; j < k; ++j) strides_[j].push_back(st[j][d]);
      }
    }
    if (dims_.empty()) {
      dims_.push_back(1);
      strides_.assign(k, {0});
    }
    inner_ = dims_.back();
    for (size_t j = 0; j < k; ++j) steps_.push_back(strides_[j].back());
    rows_ = NumElements(out) == 0 ? 0 : NumElements(dims_) / inner_;
  }

  int64_t inner() const { return inner_; }
  int64_t rows() const { return rows_; }
  const std::vector<int64_t>& steps() const { return steps_; }

  // Calls f(out_offset, in_offsets (k values), row length) for every row: across the
  // OpenMP team in contiguous blocks of rows once the output has 2^15 elements.
  template <typename F>
  void Run(F&& f) const {
    ParallelBlocks(rows_, [&](int64_t begin, int64_t end) { RunRows(begin, end, f); }, inner_);
  }
  // The same for rows [begin, end), on the calling thread. Offsets advance row by row as
  // an odometer over the outer dims; only `begin` is found by division.
  template <typename F>
  void RunRows(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    const int r = static_cast<int>(dims_.size()) - 1;  // outer dims: [0, r)
    const size_t k = steps_.size();
    int64_t offs[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    absl::InlinedVector<int64_t, 8> idx(dims_.size(), 0);
    int64_t rem = begin;
    for (int d = r - 1; d >= 0; --d) {
      idx[d] = rem % dims_[d];
      rem /= dims_[d];
      for (size_t j = 0; j < k; ++j) offs[j] += idx[d] * strides_[j][d];
    }
    for (int64_t row = begin;;) {
      f(row * inner_, offs, inner_);
      if (++row == end) return;
      for (int d = r - 1; d >= 0; --d) {
        for (size_t j = 0; j < k; ++j) offs[j] += strides_[j][d];
        if (++idx[d] < dims_[d]) break;
        for (size_t j = 0; j < k; ++j) offs[j] -= strides_[j][d] * dims_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  Dims dims_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> steps_;
  int64_t inner_ = 1, rows_ = 0;
};

// out[i] = f(a[i], b[i]) (in compute types) over broadcast rows.
template <typename TA, typename TB, typename TO, typename F>
void BroadcastBinary(const Tensor& a, const Dims& a_dims, const Tensor& b, const Dims& b_dims,
                     Tensor& out, const F& f) {
  if (out.numel() == 0) return;
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out.data<TO>();
  using CA = ComputeT<TA>;
  using CB = ComputeT<TB>;
  // Small same-shape or scalar operands: one flat row, without building BroadcastRows.
  const int64_t total = out.numel();
  const bool a_full = a_dims == out.dims(), b_full = b_dims == out.dims();
  const bool a_one = NumElements(a_dims) == 1, b_one = NumElements(b_dims) == 1;
  if (total < (1 << 15) && (a_full || a_one) && (b_full || b_one)) {
    for (int64_t i = 0; i < total; ++i)
      po[i] = FromCompute<TO>(f(static_cast<CA>(pa[a_full ? i : 0]), static_cast<CB>(pb[b_full ? i : 0])));
    return;
  }
  BroadcastRows rows(out.dims(), {a_dims, b_dims});
  const int64_t sa = rows.steps()[0], sb = rows.steps()[1];
  rows.Run([&](int64_t o, const int64_t* off, int64_t n) {
    const TA* x = pa + off[0];
    const TB* y = pb + off[1];
    TO* z = po + o;
    if (sa && sb) {
      for (int64_t i = 0; i < n; ++i)
        z[i] = FromCompute<TO>(f(static_cast<CA>(x[i]), static_cast<CB>(y[i])));
    } else if (sa) {
      const CB yv = static_cast<CB>(y[0]);
      for (int64_t i = 0; i < n; ++i) z[i] = FromCompute<TO>(f(static_cast<CA>(x[i]), yv));
    } else if (sb) {
      const CA xv = static_cast<CA>(x[0]);
      for (int64_t i = 0; i < n; ++i) z[i] = FromCompute<TO>(f(xv, static_cast<CB>(y[i])));
    } else {
      const TO v = FromCompute<TO>(f(static_cast<CA>(x[0]), static_cast<CB>(y[0])));
      for (int64_t i = 0; i < n; ++i) z[i] = v;
    }
  });
}

// Before opset 7 binary ops broadcast only with attribute broadcast=1: B's shape is
// matched against A's starting at `axis` (default: suffix). BDims returns B's dims as
// seen under numpy rules (padded with trailing 1s); from opset 7 simply B's dims.
class LegacyBroadcast {
 public:
  LegacyBroadcast(const Node& node, int opset)
      : opset_(opset),
        broadcast_(node.attr_int("broadcast", 0) != 0),
        has_axis_(node.has_attr("axis")),
        axis_(node.attr_int("axis", 0)) {}

  absl::StatusOr<Dims> BDims(const Dims& a, const Dims& b) const {
    if (opset_ >= 7) return b;
    if (!broadcast_) {
      if (a != b)
        return absl::InvalidArgumentError("inputs have shapes " + DimsToString(a) + " and " +
                                          DimsToString(b) +
                                          " but attribute broadcast is not set (opset < 7)");
      return b;
    }
    const int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
    if (rb > ra)
      return absl::InvalidArgumentError("input B " + DimsToString(b) +
                                        " has higher rank than A " + DimsToString(a));
    int64_t axis = has_axis_ ? axis_ : ra - rb;
    if (axis < 0) axis += ra;
    if (axis < 0 || axis + rb > ra)
      return absl::InvalidArgumentError("attribute axis " + std::to_string(axis_) +
                                        " does not fit B " + DimsToString(b) + " into A " +
                                        DimsToString(a));
    for (int i = 0; i < rb; ++i)
      if (b[i] != a[axis + i] && b[i] != 1)
        return absl::InvalidArgumentError("input B " + DimsToString(b) + " does not match A " +
                                          DimsToString(a) + " at axis " + std::to_string(axis));
    Dims out = b;
    out.resize(ra - axis, 1);
    return out;
  }

 private:
  int opset_;
  bool broadcast_, has_axis_;
  int64_t axis_;
};

// Below these sizes a oneDNN call (memory objects, execute, ~2-4 us) costs more than the
// reference loop, so the runners below decline and the caller's loop runs.
constexpr int64_t kDnnlMinEltwiseElements = 64;     // transcendental loops: ~10-20 ns each
constexpr int64_t kDnnlMinBinaryElements = 4096;    // vectorized loops: < 1 us at this size

// Cached oneDNN eltwise forward primitive over a flat f32 buffer of n elements.
class DnnlEltwise {
 public:
  // Returns false (and the caller falls back to reference code) if oneDNN refuses or the
  // tensor is too small to be worth a primitive call.
  bool Run(dnnl::algorithm alg, float alpha, float beta, const Tensor& x, Tensor& y) {
    const int64_t n = x.numel();
    if (n < kDnnlMinEltwiseElements) return false;
    try {
      auto& e = cache_.Get({{n}}, [&] {
        auto md = PlainDesc({n}, dnnl::memory::data_type::f32);
        dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, alg, md, alpha, beta);
        dnnl::eltwise_forward::primitive_desc pd(d, DnnlEngine());
        return Entry{md, dnnl::eltwise_forward(pd)};
      });
      e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC, WrapTensor(x, e.md)},
                                    {DNNL_ARG_DST, WrapTensor(y, e.md)}});
      DnnlStream().wait();
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

 private:
  struct Entry {
    dnnl::memory::desc md;
    dnnl::eltwise_forward prim;
  };
  ShapeCache<Entry> cache_;
};

// Cached oneDNN binary primitive (f32) for out = a op b where b broadcasts to a == out.
// Returns false when the shapes do not fit, oneDNN refuses or offers only its reference
// implementation, or out is small.
class DnnlBinary {
 public:
  bool Run(dnnl::algorithm alg, const Tensor& a, const Dims& b_dims, const Tensor& b,
           Tensor& out) {
    const Dims& od = out.dims();
    if (out.numel() < kDnnlMinBinaryElements || a.dims() != od || od.empty() || od.size() > 12 || b_dims.size() > od.size()) return false;
    Dims bd(od.size() - b_dims.size(), 1);
    bd.insert(bd.end(), b_dims.begin(), b_dims.end());
    for (size_t i = 0; i < od.size(); ++i)
      if (bd[i] != od[i] && bd[i] != 1) return false;
    try {
      auto& e = cache_.Get({od, bd, {static_cast<int64_t>(alg)}}, [&] {
        auto f32 = dnnl::memory::data_type::f32;
        auto amd = PlainDesc(od, f32), bmd = PlainDesc(bd, f32);
        dnnl::binary::desc d(alg, amd, bmd, amd);
        dnnl::binary::primitive_desc pd(d, DnnlEngine());
        return Entry{amd, bmd, dnnl::binary(pd), std::strncmp(pd.impl_info_str(), "ref", 3) != 0};
      });
      if (!e.jit) return false;
      e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC_0, WrapTensor(a, e.amd)},
                                    {DNNL_ARG_SRC_1, WrapTensor(b, e.bmd)},
                                    {DNNL_ARG_DST, WrapTensor(out, e.amd)}});
      DnnlStream().wait();
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

 private:
  struct Entry {
    dnnl::memory::desc amd, bmd;
    dnnl::binary prim;
    // False for oneDNN's reference implementation, which it picks for broadcasts its jit
    // kernels lack (e.g. over the middle dims of a channel-blocked [N, C/8, H, W, 8] under
    // AVX2) and which runs ~100x slower than the callers' own loops: Run declines it.
    bool jit;
  };
  ShapeCache<Entry> cache_;
};

}  // namespace tandem::cpu
