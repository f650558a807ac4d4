// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare (axes from the
// attribute before opset 13 for ReduceSum and 18 for the others, from optional input 1
// after; keepdims; noop_with_empty_axes) and ArgMax/ArgMin. float32 sums (Sum, Mean,
// SumSquare, L2, L1) over one run of adjacent axes run on row_sums.h's vector loops; other float32
// reductions use the oneDNN reduction primitive where it has the function; the reference path collapses the
// shape into alternating kept/reduced groups and accumulates in double (floats) or
// 64-bit integers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <omp.h>

#include "providers/cpu/kernels/elementwise.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/row_sums.h"

namespace tandem::cpu {
namespace {

enum class RK { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

RK KindOf(const std::string& op) {
  if (op == "ReduceSum") return RK::kSum;
  if (op == "ReduceMean") return RK::kMean;
  if (op == "ReduceMax") return RK::kMax;
  if (op == "ReduceMin") return RK::kMin;
  if (op == "ReduceProd") return RK::kProd;
  if (op == "ReduceL1") return RK::kL1;
  if (op == "ReduceL2") return RK::kL2;
  if (op == "ReduceLogSum") return RK::kLogSum;
  if (op == "ReduceLogSumExp") return RK::kLogSumExp;
  return RK::kSumSquare;
}

// Input shape collapsed into groups (size-1 dims dropped, neighbours with the same role
// merged). Offsets of all reduced positions except a trailing contiguous reduced group
// are precomputed; outputs are enumerated over the kept groups.
struct ReducePlan {
  std::vector<int64_t> kept_sizes, kept_strides;
  std::vector<int64_t> red_offsets;  // offsets of reduced positions (outer groups)
  int64_t inner = 1;                 // length of the trailing contiguous group
  bool inner_reduced = true;         // whether that trailing group is reduced
  int64_t outputs = 1, count = 1;    // number of outputs, elements per output

  ReducePlan(const Dims& dims, const std::vector<bool>& reduced) {
    std::vector<int64_t> sizes, strides;
    std::vector<bool> roles;
    const std::vector<int64_t> st = Strides(dims);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1) continue;
      if (!sizes.empty() && roles.back() == reduced[d] && strides.back() == st[d] * dims[d]) {
        sizes.back() *= dims[d];
        strides.back() = st[d];
      } else {
        sizes.push_back(dims[d]);
        strides.push_back(st[d]);
        roles.push_back(reduced[d]);
      }
    }
    if (!sizes.empty() && strides.back() == 1) {
      inner = sizes.back();
      inner_reduced = roles.back();
      sizes.pop_back();
      strides.pop_back();
      roles.pop_back();
    }
    std::vector<int64_t> rs, rst;
    for (size_t g = 0; g < sizes.size(); ++g) {
      if (roles[g]) {
        rs.push_back(sizes[g]);
        rst.push_back(strides[g]);
      } else {
        kept_sizes.push_back(sizes[g]);
        kept_strides.push_back(strides[g]);
      }
    }
    // Enumerate offsets of the outer reduced groups.
    red_offsets.push_back(0);
    for (size_t g = 0; g < rs.size(); ++g) {
      std::vector<int64_t> next;
      next.reserve(red_offsets.size() * rs[g]);
      for (int64_t base : red_offsets)
        for (int64_t i = 0; i < rs[g]; ++i) next.push_back(base + i * rst[g]);
      red_offsets.swap(next);
    }
    count = static_cast<int64_t>(red_offsets.size()) * (inner_reduced ? inner : 1);
    outputs = NumElements(kept_sizes) * (inner_reduced ? 1 : inner);
  }

  // Input offset of the output group with index g (over kept groups).
  int64_t KeptOffset(int64_t g) const {
    int64_t off = 0;
    for (int d = static_cast<int>(kept_sizes.size()) - 1; d >= 0; --d) {
      off += (g % kept_sizes[d]) * kept_strides[d];
      g /= kept_sizes[d];
    }
    return off;
  }

  // acc[o] = step(acc[o], x, o) over every reduced element x of output o.
  template <typename T, typename A, typename Step>
  void Accumulate(const T* x, std::vector<A>& acc, const Step& step) const {
    if (inner_reduced) {
      ParallelFor(outputs, [&](int64_t o) {
        const T* p = x + KeptOffset(o);
        A a = acc[o];
        for (int64_t r : red_offsets)
          for (int64_t j = 0; j < inner; ++j) a = step(a, static_cast<ComputeT<T>>(p[r + j]), o);
        acc[o] = a;
      }, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(count, 1)));
    } else {
      // Trailing kept group: process contiguous chunks of outputs together.
      const int64_t chunk = 1024, chunks = (inner + chunk - 1) / chunk;
      const int64_t groups = outputs / inner;
      ParallelFor(groups * chunks, [&](int64_t task) {
        const int64_t g = task / chunks, begin = (task % chunks) * chunk;
        const int64_t end = std::min(inner, begin + chunk);
        const T* p = x + KeptOffset(g);
        A* a = acc.data() + g * inner;
        for (int64_t r : red_offsets)
          for (int64_t i = begin; i < end; ++i)
            a[i] = step(a[i], static_cast<ComputeT<T>>(p[r + i]), g * inner + i);
      }, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(count * chunk, 1)));
    }
  }
};

template <typename T>
using AccT = std::conditional_t<kIsFloatLike<T>, double,
                                std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T>
void ReferenceReduce(RK kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  using A = AccT<T>;
  const int64_t n_out = y.numel();
  ReducePlan plan(x.dims(), reduced);
  const int64_t count = x.numel() == 0 ? 0 : plan.count;
  constexpr A kLowest = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                             : std::numeric_limits<T>::lowest();
  constexpr A kHighest = std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                              : std::numeric_limits<T>::max();
  A init = 0;
  if (kind == RK::kProd) init = 1;
  if (kind == RK::kMax || kind == RK::kLogSumExp) init = kLowest;
  if (kind == RK::kMin) init = kHighest;
  std::vector<A> acc(n_out, init), shift;
  const T* px = x.data<T>();
  const bool run = x.numel() > 0;
  auto sq = [](A a, A v) { return a + v * v; };
  switch (kind) {
    case RK::kSum: case RK::kMean: case RK::kLogSum:
      if (run) plan.Accumulate(px, acc, [](A a, auto v, int64_t) { return a + A(v); });
      break;
    case RK::kSumSquare: case RK::kL2:
      if (run) plan.Accumulate(px, acc, [&](A a, auto v, int64_t) { return sq(a, A(v)); });
      break;
    case RK::kL1:
      if (run)
        plan.Accumulate(px, acc, [](A a, auto v, int64_t) {
          A w = A(v);
          if constexpr (std::is_signed_v<A>) w = w < 0 ? -w : w;
          return a + w;
        });
      break;
    case RK::kProd:
      if (run) plan.Accumulate(px, acc, [](A a, auto v, int64_t) { return a * A(v); });
      break;
    case RK::kMax: case RK::kLogSumExp:
      if (run)
        plan.Accumulate(px, acc, [](A a, auto v, int64_t) {
          A w = A(v);
          return (w > a || IsNan(w)) ? w : a;
        });
      break;
    case RK::kMin:
      if (run)
        plan.Accumulate(px, acc, [](A a, auto v, int64_t) {
          A w = A(v);
          return (w < a || IsNan(w)) ? w : a;
        });
      break;
  }
  if (kind == RK::kLogSumExp) {
    shift = acc;
    for (A& s : shift)
      if (!std::isfinite(static_cast<double>(s))) s = 0;
    std::fill(acc.begin(), acc.end(), A(0));
    if (run)
      plan.Accumulate(px, acc, [&](A a, auto v, int64_t o) {
        return a + static_cast<A>(std::exp(static_cast<double>(v) - static_cast<double>(shift[o])));
      });
  }
  T* out = y.data<T>();
  ParallelFor(n_out, [&](int64_t o) {
    A a = acc[o];
    double d = static_cast<double>(a);
    switch (kind) {
      case RK::kMean:
        if constexpr (std::is_integral_v<A>) {
          out[o] = count ? static_cast<T>(a / static_cast<A>(count)) : T(0);
          return;
        } else {
          d = d / static_cast<double>(count);
        }
        break;
      case RK::kL2: d = std::sqrt(d); break;
      case RK::kLogSum: d = std::log(d); break;
      case RK::kLogSumExp: d = std::log(d) + static_cast<double>(shift[o]); break;
      default:
        out[o] = FromCompute<T>(a);
        return;
    }
    out[o] = FromCompute<T>(d);
  });
}

// Sum, Mean, SumSquare, L2 and L1 of float32 over one run of adjacent axes (size-1 axes
// aside), x as [outer, n, inner] with n reduced: row_sums.h's contiguous rows of n when inner
// is 1, else its column sums, 64 columns a task; the work split over the threads. Returns
// false for anything else.
bool ReduceAxisRun(RK kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  row_sums::Term term;
  switch (kind) {
    case RK::kSum: case RK::kMean: term = row_sums::Term::kValue; break;
    case RK::kSumSquare: case RK::kL2: term = row_sums::Term::kSquare; break;
    case RK::kL1: term = row_sums::Term::kAbsolute; break;
    default: return false;
  }
  int64_t outer = 1, n = 1, inner = 1;
  int part = 0;  // 0: the kept axes before the run, 1: the run, 2: the kept axes after it
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t size = x.dims()[d];
    if (size == 1) continue;
    if (reduced[d]) {
      if (part == 2) return false;
      part = 1;
      n *= size;
    } else {
      if (part == 1) part = 2;
      (part == 0 ? outer : inner) *= size;
    }
  }
  if (n == 0 || outer * inner != y.numel() || y.numel() * n != x.numel()) return false;
  const auto& kernels = row_sums::Builds().best();
  const float* px = x.data<float>();
  float* out = y.data<float>();
  auto finish = [&](double s) {
    return static_cast<float>(kind == RK::kMean ? s / static_cast<double>(n) : kind == RK::kL2 ? std::sqrt(s) : s);
  };
  if (inner == 1) {
    ParallelBlocks(outer, [&](int64_t begin, int64_t end) {
      double sums[64];
      for (int64_t r0 = begin; r0 < end; r0 += 64) {
        const int64_t count = std::min<int64_t>(64, end - r0);
        kernels.sum_rows(px + r0 * n, count, n, term, sums);
        for (int64_t r = 0; r < count; ++r) out[r0 + r] = finish(sums[r]);
      }
    }, n);
    return true;
  }
  // Tasks of 64 columns; with fewer of them than two per thread, the rows split into parts of
  // at least 1024 too (a long axis before a narrow one), their sums added afterwards.
  constexpr int64_t kColumns = 64;
  const int64_t chunks = (inner + kColumns - 1) / kColumns, threads = std::max(1, omp_get_max_threads());
  const int64_t parts = std::clamp<int64_t>(2 * threads / (outer * chunks), 1, std::max<int64_t>(n / 1024, 1));
  const int64_t rows = (n + parts - 1) / parts;
  std::vector<double> sums(outer * chunks * parts * kColumns, 0.0);
  ParallelForIf(x.numel() >= (int64_t{1} << 15), outer * chunks * parts, [&](int64_t task) {
    const int64_t part = task % parts, oc = task / parts, o = oc / chunks, c0 = oc % chunks * kColumns;
    const int64_t r0 = std::min(n, part * rows), count = std::min(n, r0 + rows) - r0;
    kernels.sum_columns(px + (o * n + r0) * inner + c0, count, std::min(kColumns, inner - c0), inner, term,
                        &sums[task * kColumns]);
  });
  for (int64_t oc = 0; oc < outer * chunks; ++oc) {
    const int64_t o = oc / chunks, c0 = oc % chunks * kColumns, width = std::min(kColumns, inner - c0);
    for (int64_t j = 0; j < width; ++j) {
      double s = 0;
      for (int64_t part = 0; part < parts; ++part) s += sums[(oc * parts + part) * kColumns + j];
      out[o * inner + c0 + j] = finish(s);
    }
  }
  return true;
}

// oneDNN reduction over f32: dst has src's rank with 1 on reduced axes. Max/Min stay on
// the reference path, which propagates NaN like numpy.
class DnnlReduce {
 public:
  bool Run(RK kind, const Tensor& x, const Dims& kept, Tensor& y) {
    dnnl::algorithm alg;
    float p = 0;
    switch (kind) {
      case RK::kSum: alg = dnnl::algorithm::reduction_sum; break;
      case RK::kMean: alg = dnnl::algorithm::reduction_mean; break;
      case RK::kProd: alg = dnnl::algorithm::reduction_mul; break;
      case RK::kL1: alg = dnnl::algorithm::reduction_norm_lp_sum; p = 1; break;
      case RK::kL2: alg = dnnl::algorithm::reduction_norm_lp_sum; p = 2; break;
      case RK::kSumSquare: alg = dnnl::algorithm::reduction_norm_lp_power_p_sum; p = 2; break;
      default: return false;
    }
    if (x.rank() == 0 || x.rank() > 12 || x.numel() == 0 || kept == x.dims()) return false;
    try {
      auto& e = cache_.Get({x.dims(), kept, {static_cast<int64_t>(kind)}}, [&] {
        auto f32 = dnnl::memory::data_type::f32;
        auto smd = PlainDesc(x.dims(), f32), dmd = PlainDesc(kept, f32);
        dnnl::reduction::desc d(alg, smd, dmd, p, 0.f);
        dnnl::reduction::primitive_desc pd(d, DnnlEngine());
        return Entry{smd, dmd, dnnl::reduction(pd)};
      });
      e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC, WrapTensor(x, e.smd)},
                                    {DNNL_ARG_DST, WrapTensor(y, e.dmd)}});
      DnnlStream().wait();
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

 private:
  struct Entry {
    dnnl::memory::desc smd, dmd;
    dnnl::reduction prim;
  };
  ShapeCache<Entry> cache_;
};

class Reduce : public Kernel {
 public:
  explicit Reduce(const KernelInfo& info)
      : kind_(KindOf(info.node.op_type)),
        axes_input_(info.opset >= (info.node.op_type == "ReduceSum" ? 13 : 18)),
        attr_axes_(info.node.attr_ints("axes")),
        has_attr_axes_(info.node.has_attr("axes")),
        keepdims_(info.node.attr_int("keepdims", 1) != 0),
        noop_(info.node.attr_int("noop_with_empty_axes", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* xp = ctx.input(0);
    if (!xp) return absl::InvalidArgumentError("input 0 (data) is missing");
    const Tensor& x = *xp;
    std::vector<int64_t> axes;
    bool given = false;
    if (axes_input_) {
      if (const Tensor* a = ctx.input(1)) {
        if (a->dtype() != DataType::kInt64 || a->rank() > 1)
          return absl::InvalidArgumentError("axes (input 1) must be a 1-D int64 tensor");
        axes = ReadInt64s(*a);
        given = !axes.empty();
      }
    } else {
      axes = attr_axes_;
      given = has_attr_axes_ && !axes.empty();
    }
    const int rank = x.rank();
    if (!given && axes_input_ && noop_) {
      Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
      if (x.bytes()) std::memcpy(y.raw(), x.raw(), x.bytes());
      return absl::OkStatus();
    }
    std::vector<bool> reduced(rank, !given);
    for (int64_t a : axes) {
      if (a < -rank || a >= std::max(rank, 1))
        return absl::InvalidArgumentError("axis " + std::to_string(a) +
                                          " is out of range for input of rank " +
                                          std::to_string(rank));
      if (rank) reduced[a < 0 ? a + rank : a] = true;
    }
    Dims kept, out_dims;
    for (int d = 0; d < rank; ++d) {
      kept.push_back(reduced[d] ? 1 : x.dims()[d]);
      if (!reduced[d] || keepdims_) out_dims.push_back(kept.back());
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_dims);
    if (y.numel() == 0) return absl::OkStatus();
    // oneDNN accumulates in float: past ~1k terms per output its relative error (~1e-5 for
    // a 40k-element mean) is worse than a loss value deserves, so long reductions take the
    // reference path, which accumulates in double.
    // Small tensors too: the reference loop beats a oneDNN call there.
    const bool short_reduction = x.numel() / y.numel() <= 1024;
    if (x.dtype() == DataType::kFloat && ReduceAxisRun(kind_, x, reduced, y)) return absl::OkStatus();
    if (x.dtype() == DataType::kFloat && short_reduction &&
        x.numel() >= kDnnlMinBinaryElements && dnnl_.Run(kind_, x, kept, y))
      return absl::OkStatus();
    bool done = false;
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatLike<T> || kIsInt<T>) {
        ReferenceReduce<T>(kind_, x, reduced, y);
        done = true;
      } else if constexpr (std::is_same_v<T, bool>) {  // opset 20: Max is any, Min is all
        if (kind_ == RK::kMax || kind_ == RK::kMin) {
          ReferenceReduce<T>(kind_, x, reduced, y);
          done = true;
        }
      }
    });
    return done ? absl::OkStatus()
                : absl::InvalidArgumentError(std::string("element type ") +
                                             DataTypeName(x.dtype()) + " is not supported");
  }

 private:
  RK kind_;
  bool axes_input_;
  std::vector<int64_t> attr_axes_;
  bool has_attr_axes_, keepdims_, noop_;
  DnnlReduce dnnl_;
};

// ArgMax / ArgMin along one axis; int64 indices.
class ArgReduce : public Kernel {
 public:
  explicit ArgReduce(const KernelInfo& info)
      : max_(info.node.op_type == "ArgMax"),
        axis_(info.node.attr_int("axis", 0)),
        keepdims_(info.node.attr_int("keepdims", 1) != 0),
        last_(info.node.attr_int("select_last_index", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* xp = ctx.input(0);
    if (!xp) return absl::InvalidArgumentError("input 0 is missing");
    const Tensor& x = *xp;
    auto axis = NormalizeAxis(axis_, x.rank());
    if (!axis.ok()) return axis.status();
    const int ax = *axis;
    const int64_t n = x.rank() ? x.dims()[ax] : 1;
    if (n == 0) return absl::InvalidArgumentError("cannot take the arg-extreme of an empty axis");
    Dims out_dims;
    for (int d = 0; d < x.rank(); ++d)
      if (d != ax) out_dims.push_back(x.dims()[d]);
      else if (keepdims_) out_dims.push_back(1);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, out_dims);
    if (y.numel() == 0) return absl::OkStatus();
    const int64_t outer = x.rank() ? DimProduct(x.dims(), 0, ax) : 1;
    const int64_t inner = x.rank() ? DimProduct(x.dims(), ax + 1, x.rank()) : 1;
    bool done = false;
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kIsFloatLike<T> || kIsInt<T>) {
        using C = ComputeT<T>;
        const T* px = x.data<T>();
        int64_t* py = y.data<int64_t>();
        ParallelFor(outer, [&](int64_t o) {
          std::vector<C> best(inner);
          int64_t* idx = py + o * inner;
          const T* base = px + o * n * inner;
          for (int64_t i = 0; i < inner; ++i) {
            best[i] = static_cast<C>(base[i]);
            idx[i] = 0;
          }
          for (int64_t k = 1; k < n; ++k)
            for (int64_t i = 0; i < inner; ++i) {
              C v = static_cast<C>(base[k * inner + i]);
              C& b = best[i];
              if (IsNan(b)) continue;  // NaN already selected (numpy: first NaN wins)
              bool take = IsNan(v) || (max_ ? (last_ ? v >= b : v > b) : (last_ ? v <= b : v < b));
              if (take) {
                b = v;
                idx[i] = k;
              }
            }
        }, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(n * inner, 1)));
        done = true;
      }
    });
    return done ? absl::OkStatus()
                : absl::InvalidArgumentError(std::string("element type ") +
                                             DataTypeName(x.dtype()) + " is not supported");
  }

 private:
  bool max_;
  int64_t axis_;
  bool keepdims_, last_;
};

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  using namespace types;
  const int M = kMaxOpset;
  r.Add("ReduceSum", 1, 12, kNumeric, Make<Reduce>());
  r.Add("ReduceSum", 13, M, kNumeric, Make<Reduce>());
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                         "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
    r.Add(op, 1, 17, kNumeric, Make<Reduce>());
    if (std::string(op) == "ReduceMax" || std::string(op) == "ReduceMin") {
      std::vector<DataType> with_bool = kNumeric;  // opset 20 admits bool
      with_bool.push_back(DataType::kBool);
      r.Add(op, 18, 19, kNumeric, Make<Reduce>());
      r.Add(op, 20, M, with_bool, Make<Reduce>());
    } else {
      r.Add(op, 18, M, kNumeric, Make<Reduce>());
    }
  }
  r.Add("ArgMax", 1, M, kNumeric, Make<ArgReduce>());
  r.Add("ArgMin", 1, M, kNumeric, Make<ArgReduce>());
}

}  // namespace tandem::cpu
