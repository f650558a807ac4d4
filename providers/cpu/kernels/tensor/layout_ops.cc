// Data-movement kernels that rearrange elements: Transpose, Concat, Split, Slice, Tile,
// Pad, CenterCropPad, DepthToSpace, SpaceToDepth, ReverseSequence and Trilu. All work on any element type by byte width (strings element-wise).
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

#include "graph/resource_limits.h"
#include "ops/pad_geometry.h"
#include "ops/slice_geometry.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/strided_reorder.h"

namespace tandem::cpu {
namespace {

absl::Status Missing(const char* what) {
  return absl::InvalidArgumentError(std::string("missing required input '") + what + "'");
}

// ---------------------------------------------------------------------------------------
// Transpose

class Transpose : public Kernel {
 public:
  explicit Transpose(const KernelInfo& info)
      : has_perm_(info.node.has_attr("perm")), perm_(info.node.attr_ints("perm")) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("data");
    const int r = x->rank();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_ || (perm.empty() && r > 0)) {  // default: reverse the axes
      perm.resize(r);
      for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
    }
    if (static_cast<int>(perm.size()) != r)
      return absl::InvalidArgumentError("perm " + DimsToString(perm) + " does not match rank " +
                                        std::to_string(r));
    std::vector<bool> seen(r, false);
    for (int64_t& p : perm) {
      if (p < 0) p += r;
      if (p < 0 || p >= r || seen[p])
        return absl::InvalidArgumentError("perm " + DimsToString(perm_) +
                                          " is not a permutation of the axes");
      seen[p] = true;
    }
    const std::vector<int64_t> in_strides = Strides(x->dims());
    Dims out(r);
    std::vector<int64_t> strides(r);
    for (int i = 0; i < r; ++i) {
      out[i] = x->dim(static_cast<int>(perm[i]));
      strides[i] = in_strides[perm[i]];
    }
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), out);
    if (x->dtype() != DataType::kString) {
      absl::StatusOr<bool> reordered =
          reorder_.Copy(x->raw(), out, strides, static_cast<int>(SizeOf(x->dtype())), y.raw());
      if (!reordered.ok()) return reordered.status();
      if (*reordered) return absl::OkStatus();
    }
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      TransposeCopy(x->data<T>(), out, strides, y.data<T>());
    });
    return absl::OkStatus();
  }

 private:
  bool has_perm_;
  std::vector<int64_t> perm_;
  StridedReorder reorder_;  // feature-map transposes
};

// ---------------------------------------------------------------------------------------
// Concat / Split

class Concat : public Kernel {
 public:
  explicit Concat(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", 1)), has_axis_(info.node.has_attr("axis") || info.opset < 4) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (!has_axis_) return absl::InvalidArgumentError("attribute 'axis' is required");
    std::vector<const Tensor*> in;
    for (int i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.input(i)) in.push_back(ctx.input(i));
    if (in.empty()) return absl::InvalidArgumentError("needs at least one input");
    const Tensor& first = *in[0];
    const int r = first.rank();
    if (r == 0) return absl::InvalidArgumentError("cannot concatenate scalars");
    auto axis_or = NormalizeAxis(axis_, r);
    if (!axis_or.ok()) return axis_or.status();
    const int axis = *axis_or;
    Dims out = first.dims();
    out[axis] = 0;
    for (const Tensor* t : in) {
      bool ok = t->rank() == r && t->dtype() == first.dtype();
      for (int d = 0; ok && d < r; ++d) ok = d == axis || t->dim(d) == first.dim(d);
      if (!ok)
        return absl::InvalidArgumentError("inputs of shapes " + DimsToString(first.dims()) + " and " +
                                          DimsToString(t->dims()) + " (" + DataTypeName(first.dtype()) +
                                          ", " + DataTypeName(t->dtype()) +
                                          ") cannot be concatenated on axis " + std::to_string(axis));
      out[axis] += t->dim(axis);
    }
    Tensor& y = ctx.AllocateOutput(0, first.dtype(), out);
    const int64_t outer = DimProduct(out, 0, axis);
    const int64_t inner = DimProduct(out, axis + 1, r);
    const int64_t out_row = out[axis] * inner;
    // Output row by output row (each gathers its piece of every input), on all threads when
    // there is enough to copy: a channels-last Concat is many short rows.
    VisitElementWidth(first.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* dst = y.data<T>();
      ParallelForIf(static_cast<int64_t>(y.bytes()) >= (1 << 18), outer, [&](int64_t o) {
        int64_t col = 0;
        for (const Tensor* t : in) {
          const int64_t row = t->dim(axis) * inner;
          if (row > 0) std::copy_n(t->data<T>() + o * row, row, dst + o * out_row + col);
          col += row;
        }
      });
    });
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
  bool has_axis_;
};

// Split sizes: input 1 at opset 1 and from 13, attribute 'split' otherwise; without them
// equal parts (num_outputs at 18 allows a smaller last part).
class Split : public Kernel {
 public:
  explicit Split(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.node.attr_int("axis", 0)),
        has_split_attr_(info.node.has_attr("split")),
        split_attr_(info.node.attr_ints("split")),
        num_outputs_(info.node.attr_int("num_outputs", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("input");
    auto axis_or = NormalizeAxis(axis_, x->rank());
    if (!axis_or.ok()) return axis_or.status();
    if (x->rank() == 0) return absl::InvalidArgumentError("cannot split a scalar");
    const int axis = *axis_or;
    const int64_t dim = x->dim(axis);
    const int n_out = ctx.num_outputs();
    std::vector<int64_t> split;
    bool given = false;
    if ((opset_ == 1 || opset_ >= 13) && ctx.input(1)) {
      split = ReadInt64s(*ctx.input(1));
      given = true;
    } else if (opset_ < 13 && has_split_attr_) {
      split = split_attr_;
      given = true;
    }
    if (given) {
      if (static_cast<int>(split.size()) != n_out)
        return absl::InvalidArgumentError("split " + DimsToString(split) + " has " +
                                          std::to_string(split.size()) + " entries for " +
                                          std::to_string(n_out) + " outputs");
      int64_t sum = 0;
      for (int64_t s : split) {
        if (s < 0) return absl::InvalidArgumentError("split " + DimsToString(split) + " has a negative size");
        sum += s;
      }
      if (sum != dim)
        return absl::InvalidArgumentError("split " + DimsToString(split) + " does not sum to dim " +
                                          std::to_string(dim) + " of axis " + std::to_string(axis));
    } else {
      if (n_out <= 0) return absl::InvalidArgumentError("no outputs");
      if (opset_ >= 18 && num_outputs_ > 0 && num_outputs_ != n_out)
        return absl::InvalidArgumentError("num_outputs is " + std::to_string(num_outputs_) +
                                          " but the node has " + std::to_string(n_out) + " outputs");
      if (opset_ >= 18 && num_outputs_ > 0) {
        const int64_t part = (dim + n_out - 1) / n_out;
        for (int i = 0; i < n_out; ++i)
          split.push_back(std::max<int64_t>(0, std::min(part, dim - part * i)));
      } else {
        if (dim % n_out != 0)
          return absl::InvalidArgumentError("dim " + std::to_string(dim) + " of axis " +
                                            std::to_string(axis) + " cannot be split into " +
                                            std::to_string(n_out) + " equal parts");
        split.assign(n_out, dim / n_out);
      }
    }
    const int64_t outer = DimProduct(x->dims(), 0, axis);
    const int64_t inner = DimProduct(x->dims(), axis + 1, x->rank());
    const int64_t in_row = dim * inner;
    int64_t col = 0;
    for (int i = 0; i < n_out; ++i) {
      const int64_t row = split[i] * inner;
      if (ctx.output_wanted(i)) {
        Dims od = x->dims();
        od[axis] = split[i];
        Tensor& y = ctx.AllocateOutput(i, x->dtype(), od);
        VisitElementWidth(x->dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T* src = x->data<T>();
          T* dst = y.data<T>();
          for (int64_t o = 0; o < outer && row > 0; ++o)
            std::copy_n(src + o * in_row + col, row, dst + o * row);
        });
      }
      col += row;
    }
    return absl::OkStatus();
  }

 private:
  int opset_;
  int64_t axis_;
  bool has_split_attr_;
  std::vector<int64_t> split_attr_;
  int64_t num_outputs_;
};

// ---------------------------------------------------------------------------------------
// Slice: attributes starts/ends/axes before opset 10; inputs starts, ends, axes, steps
// after. Bounds are clamped as numpy does; negative steps walk backwards.
class Slice : public Kernel {
 public:
  explicit Slice(const KernelInfo& info)
      : opset_(info.opset),
        starts_(info.node.attr_ints("starts")),
        ends_(info.node.attr_ints("ends")),
        axes_(info.node.attr_ints("axes")),
        has_axes_(info.node.has_attr("axes")) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("data");
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    bool has_axes = has_axes_;
    if (opset_ >= 10) {
      if (!ctx.input(1)) return Missing("starts");
      if (!ctx.input(2)) return Missing("ends");
      starts = ReadInt64s(*ctx.input(1));
      ends = ReadInt64s(*ctx.input(2));
      has_axes = ctx.input(3) != nullptr;
      if (has_axes) axes = ReadInt64s(*ctx.input(3));
      if (ctx.input(4)) steps = ReadInt64s(*ctx.input(4));
    }
    if (has_axes && axes.size() != starts.size())
      return absl::InvalidArgumentError("starts, ends, axes and steps must have the same length");
    auto view = ResolveSlice(x->dims(), starts, ends, axes, steps);
    if (!view.ok()) return view.status();
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), view->out);
    if (y.numel() == 0) return absl::OkStatus();
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      StridedCopy(x->data<T>() + view->base, view->out, view->strides, y.data<T>());
    });
    return absl::OkStatus();
  }

 private:
  int opset_;
  std::vector<int64_t> starts_, ends_, axes_;
  bool has_axes_;
};

// ---------------------------------------------------------------------------------------
// Tile: repeats per axis (opset 6); Tile-1 took a scalar `tiles` and an `axis` input.
class Tile : public Kernel {
 public:
  explicit Tile(const KernelInfo& info) : opset_(info.opset) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("input");
    if (!ctx.input(1)) return Missing("repeats");
    const int r = x->rank();
    std::vector<int64_t> reps;
    if (opset_ < 6) {
      if (!ctx.input(2)) return Missing("axis");
      auto axis = NormalizeAxis(ctx.input(2)->ElementAsInt64(0), r);
      if (!axis.ok()) return axis.status();
      reps.assign(r, 1);
      reps[*axis] = ctx.input(1)->ElementAsInt64(0);
    } else {
      reps = ReadInt64s(*ctx.input(1));
    }
    if (static_cast<int>(reps.size()) != r)
      return absl::InvalidArgumentError("repeats " + DimsToString(reps) + " do not match rank " +
                                        std::to_string(r));
    const std::vector<int64_t> in_strides = Strides(x->dims());
    Dims out(r), walk(2 * r);
    std::vector<int64_t> strides(2 * r);
    for (int i = 0; i < r; ++i) {
      if (reps[i] < 0) return absl::InvalidArgumentError("repeats " + DimsToString(reps) + " are negative");
      out[i] = x->dim(i) * reps[i];
      walk[2 * i] = reps[i];
      walk[2 * i + 1] = x->dim(i);
      strides[2 * i] = 0;
      strides[2 * i + 1] = in_strides[i];
    }
    if (auto st = CheckOutputDims(walk); !st.ok()) return st;
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), out);
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      StridedCopy(x->data<T>(), walk, strides, y.data<T>());
    });
    return absl::OkStatus();
  }

 private:
  int opset_;
};

// ---------------------------------------------------------------------------------------
// Pad: modes constant / reflect / edge / wrap (19). Pads come from the 'paddings' (opset 1)
// or 'pads' (2-10) attribute with a float 'value', or from inputs pads, constant_value and
// axes (18) from opset 11. Negative pads crop.
template <typename T>
T ValueFromFloat(float v) {
  if constexpr (std::is_same_v<T, std::string>) return std::string();
  else if constexpr (std::is_same_v<T, bool>) return v != 0.f;
  else return T(v);
}

// Per dim of the padded shape `out`: the source index in x of every output position, or
// -1 where the constant goes. Checks the padded shape (and the maps' size) first.
absl::Status PadSourceMaps(const Dims& x_dims, const std::vector<int64_t>& before,
                           const std::vector<int64_t>& after, PadMode mode, const std::string& mode_name,
                           const std::vector<int64_t>& pads, Dims* out_dims,
                           std::vector<std::vector<int64_t>>* maps) {
  auto out = PaddedDims(x_dims, PadAmounts{before, after}, mode, mode_name, pads);
  if (!out.ok()) return out.status();
  if (auto st = CheckOutputDims(*out); !st.ok()) return st;
  int64_t map_entries = 0;
  for (int64_t n : *out)
    if (__builtin_add_overflow(map_entries, n, &map_entries))
      return absl::InvalidArgumentError("pads " + DimsToString(pads) + " overflow");
  if (auto bytes = CheckedTensorBytes(DataType::kInt64, {map_entries}); !bytes.ok()) return bytes.status();
  *out_dims = *out;
  std::vector<std::vector<int64_t>>& map = *maps;
  map.assign(out->size(), {});
  for (size_t d = 0; d < out->size(); ++d) {
    map[d].resize((*out)[d]);
    for (int64_t o = 0; o < (*out)[d]; ++o) map[d][o] = PadSourceIndex(o, before[d], x_dims[d], mode);
  }
  return absl::OkStatus();
}

// Writes output 0: x with before[d] / after[d] elements added (removed when negative) on
// each dim, the new ones filled per `mode` (constant: value_t's value when given, else
// `value`). `pads` is what errors name.
absl::Status PadOutput(KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& before,
                       const std::vector<int64_t>& after, PadMode mode, const std::string& mode_name,
                       float value_f, const Tensor* value_t, const std::vector<int64_t>& pads) {
  const int r = x.rank();
  Dims out;
  std::vector<std::vector<int64_t>> map;
  if (auto st = PadSourceMaps(x.dims(), before, after, mode, mode_name, pads, &out, &map); !st.ok()) return st;
  Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
  if (y.numel() == 0) return absl::OkStatus();
  bool ok = true;
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    T value = ValueFromFloat<T>(value_f);
    if (value_t) value = value_t->data<T>()[0];
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    if (r == 0) { dst[0] = src[0]; return; }
    const std::vector<int64_t> st = Strides(x.dims());
    const int64_t inner = out[r - 1];
    const int64_t outer = y.numel() / inner;
    const std::vector<int64_t>& last = map[r - 1];
    std::vector<int64_t> idx(r, 0);
    for (int64_t o = 0; o < outer; ++o, dst += inner) {
      int64_t base = 0;
      bool constant = false;
      for (int d = 0; d < r - 1; ++d) {
        const int64_t s = map[d][idx[d]];
        if (s < 0) { constant = true; break; }
        base += s * st[d];
      }
      if (constant) {
        std::fill_n(dst, inner, value);
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[j] = last[j] < 0 ? value : src[base + last[j]];
      }
      for (int d = r - 2; d >= 0; --d) {
        if (++idx[d] < out[d]) break;
        idx[d] = 0;
      }
    }
  };
  if (x.dtype() == DataType::kString) fill(std::string{});
  else ok = VisitNumericType(x.dtype(), fill);
  if (!ok) return absl::InvalidArgumentError("unsupported element type");
  return absl::OkStatus();
}

// Pad's inputs and attributes as the padding of each dim. `first` is the index of Pad's
// data input among the kernel's inputs (PadGrad has dY before it); `opset` the Pad's.
class PadSpec {
 public:
  PadSpec(const Node& node, int opset)
      : opset_(opset),
        attr_pads_(node.attr_ints(opset < 2 ? "paddings" : "pads")),
        value_(node.attr_float("value", 0.f)),
        mode_name_(node.attr_string("mode", "constant")) {
    const std::optional<PadMode> mode = ParsePadMode(mode_name_, opset_);
    valid_mode_ = mode.has_value();
    if (mode) mode_ = *mode;
  }

  absl::Status Resolve(KernelContext& ctx, int first) {
    const Tensor* x = ctx.input(first);
    if (!x) return Missing("data");
    if (!valid_mode_) return absl::InvalidArgumentError("unsupported mode '" + mode_name_ + "'");
    pads_ = attr_pads_;
    std::vector<int64_t> axes;
    value_t_ = nullptr;
    if (opset_ >= 11) {
      if (!ctx.input(first + 1)) return Missing("pads");
      pads_ = ReadInt64s(*ctx.input(first + 1));
      value_t_ = ctx.input(first + 2);
      if (value_t_ && value_t_->numel() != 1 && value_t_->numel() != 0)
        return absl::InvalidArgumentError("constant_value must be a scalar");
      if (value_t_ && value_t_->numel() == 0) value_t_ = nullptr;
      if (value_t_ && value_t_->dtype() != x->dtype())
        return absl::InvalidArgumentError("constant_value type differs from data type");
      if (opset_ >= 18 && ctx.input(first + 3)) axes = ReadInt64s(*ctx.input(first + 3));
    }
    auto amounts = ResolvePadAmounts(x->dims(), pads_, axes);
    if (!amounts.ok()) return amounts.status();
    before_ = std::move(amounts->before);
    after_ = std::move(amounts->after);
    return absl::OkStatus();
  }

  int opset_;
  std::vector<int64_t> attr_pads_;
  float value_;
  std::string mode_name_;
  PadMode mode_ = PadMode::kConstant;
  bool valid_mode_ = true;
  // Set by Resolve.
  std::vector<int64_t> pads_, before_, after_;
  const Tensor* value_t_ = nullptr;
};

class Pad : public Kernel {
 public:
  explicit Pad(const KernelInfo& info) : spec_(info.node, info.opset) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (auto s = spec_.Resolve(ctx, 0); !s.ok()) return s;
    return PadOutput(ctx, *ctx.input(0), spec_.before_, spec_.after_, spec_.mode_, spec_.mode_name_,
                     spec_.value_, spec_.value_t_, spec_.pads_);
  }

 private:
  PadSpec spec_;
};

// ai.tandem PadGrad(dY, <the forward Pad's inputs>), attributes those of the Pad plus
// `opset` (the Pad's): dX, every element of dY added to the x element it was copied from
// (constant padding gets none; reflect/edge/wrap send several outputs to one source).
class PadGrad : public Kernel {
 public:
  explicit PadGrad(const KernelInfo& info) : spec_(info.node, static_cast<int>(info.node.attr_int("opset", 11))) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!ctx.input(0)) return Missing("dY");
    if (auto s = spec_.Resolve(ctx, 1); !s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    Dims out;
    std::vector<std::vector<int64_t>> map;
    if (auto st = PadSourceMaps(x.dims(), spec_.before_, spec_.after_, spec_.mode_, spec_.mode_name_, spec_.pads_,
                                &out, &map);
        !st.ok())
      return st;
    if (dy.dims() != out)
      return absl::InvalidArgumentError("dY has shape " + DimsToString(dy.dims()) + ", the padded output " +
                                        DimsToString(out));
    Tensor& dx = ctx.AllocateOutput(0, dy.dtype(), x.dims());
    const int r = x.rank();
    const std::vector<int64_t> st = Strides(x.dims());
    auto run = [&](auto tag) {
      using T = decltype(tag);
      T* g = dx.data<T>();
      std::fill_n(g, dx.numel(), T(0));
      const T* src = dy.data<T>();
      std::vector<int64_t> idx(r, 0);
      for (int64_t o = 0; o < dy.numel(); ++o) {
        int64_t at = 0;
        bool constant = false;
        for (int d = 0; d < r && !constant; ++d) {
          const int64_t s = map[d][idx[d]];
          constant = s < 0;
          at += s * st[d];
        }
        if (!constant) g[at] += src[o];
        for (int d = r - 1; d >= 0; --d) {
          if (++idx[d] < out[d]) break;
          idx[d] = 0;
        }
      }
    };
    if (dy.dtype() == DataType::kFloat) run(float{});
    else if (dy.dtype() == DataType::kDouble) run(double{});
    else return absl::InvalidArgumentError(std::string("PadGrad takes float or double, got ") + DataTypeName(dy.dtype()));
    return absl::OkStatus();
  }

 private:
  PadSpec spec_;
};

// CenterCropPad (opset 18): each listed axis (default all) cropped or zero-padded to its
// target size, centred; an odd difference puts the extra element at the end. A Pad whose
// pads come from the sizes.
class CenterCropPad : public Kernel {
 public:
  explicit CenterCropPad(const KernelInfo& info)
      : has_axes_(info.node.has_attr("axes")), axes_attr_(info.node.attr_ints("axes", {})) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const std::vector<int64_t> shape = ReadInt64s(*ctx.input(1));
    std::vector<int64_t> axes = axes_attr_;
    if (!has_axes_)
      for (int a = 0; a < x.rank(); ++a) axes.push_back(a);
    if (shape.size() != axes.size())
      return absl::InvalidArgumentError("shape has " + std::to_string(shape.size()) + " values for " +
                                        std::to_string(axes.size()) + " axes");
    std::vector<int64_t> before(x.rank(), 0), after(x.rank(), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      auto a = NormalizeAxis(axes[k], x.rank());
      if (!a.ok()) return a.status();
      if (shape[k] < 0) return absl::InvalidArgumentError("target size " + std::to_string(shape[k]) + " is negative");
      const int64_t diff = shape[k] - x.dim(*a);  // > 0 pads, < 0 crops
      before[*a] = diff >= 0 ? diff / 2 : -(-diff / 2);
      after[*a] = diff - before[*a];
    }
    std::vector<int64_t> pads = before;
    pads.insert(pads.end(), after.begin(), after.end());
    return PadOutput(ctx, x, before, after, PadMode::kConstant, "constant", 0.f, nullptr, pads);
  }

 private:
  bool has_axes_;
  std::vector<int64_t> axes_attr_;
};

// ---------------------------------------------------------------------------------------
// DepthToSpace (DCR / CRD) and SpaceToDepth as strided walks over a 6-D view.
class DepthToSpace : public Kernel {
 public:
  explicit DepthToSpace(const KernelInfo& info)
      : b_(info.node.attr_int("blocksize", 0)), crd_(info.node.attr_string("mode", "DCR") == "CRD") {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("input");
    if (x->rank() != 4) return absl::InvalidArgumentError("input must be 4-D, got " + DimsToString(x->dims()));
    const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3), b = b_;
    if (b <= 0 || C % (b * b) != 0)
      return absl::InvalidArgumentError("channels " + std::to_string(C) +
                                        " are not divisible by blocksize^2 (blocksize " +
                                        std::to_string(b) + ")");
    const int64_t c2 = C / (b * b), HW = H * W;
    // Walk the output as [N, C', H, b, W, b].
    const Dims walk = {N, c2, H, b, W, b};
    std::vector<int64_t> strides;
    if (crd_)
      strides = {C * HW, b * b * HW, W, b * HW, 1, HW};
    else
      strides = {C * HW, HW, W, b * c2 * HW, 1, c2 * HW};
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), {N, c2, H * b, W * b});
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      StridedCopy(x->data<T>(), walk, strides, y.data<T>());
    });
    return absl::OkStatus();
  }

 private:
  int64_t b_;
  bool crd_;
};

class SpaceToDepth : public Kernel {
 public:
  explicit SpaceToDepth(const KernelInfo& info)
      : b_(info.node.attr_int("blocksize", 0)), crd_(info.node.attr_string("mode", "DCR") == "CRD") {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("input");
    if (x->rank() != 4) return absl::InvalidArgumentError("input must be 4-D, got " + DimsToString(x->dims()));
    const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3), b = b_;
    if (b <= 0 || H % b != 0 || W % b != 0)
      return absl::InvalidArgumentError("height and width " + std::to_string(H) + "x" +
                                        std::to_string(W) + " are not divisible by blocksize " +
                                        std::to_string(b));
    // Walk the output as [N, b, b, C, H/b, W/b] (DCR: channel (bh*b + bw)*C + c) or, for
    // mode CRD (opset 28), as [N, C, b, b, H/b, W/b] (channel c*b*b + bh*b + bw).
    const Dims walk = crd_ ? Dims{N, C, b, b, H / b, W / b} : Dims{N, b, b, C, H / b, W / b};
    const std::vector<int64_t> strides = crd_ ? std::vector<int64_t>{C * H * W, H * W, W, 1, b * W, b}
                                              : std::vector<int64_t>{C * H * W, W, 1, H * W, b * W, b};
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), {N, C * b * b, H / b, W / b});
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      StridedCopy(x->data<T>(), walk, strides, y.data<T>());
    });
    return absl::OkStatus();
  }

 private:
  int64_t b_;
  bool crd_;
};

// ---------------------------------------------------------------------------------------
// ReverseSequence: reverses the first sequence_lens[b] steps of every batch entry.
class ReverseSequence : public Kernel {
 public:
  explicit ReverseSequence(const KernelInfo& info)
      : batch_axis_(info.node.attr_int("batch_axis", 1)), time_axis_(info.node.attr_int("time_axis", 0)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* lens_t = ctx.input(1);
    if (!x) return Missing("input");
    if (!lens_t) return Missing("sequence_lens");
    if (x->rank() < 2) return absl::InvalidArgumentError("input must have rank >= 2");
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0)))
      return absl::InvalidArgumentError("batch_axis and time_axis must be 0 and 1 in some order");
    const int64_t B = x->dim(static_cast<int>(batch_axis_)), T_ = x->dim(static_cast<int>(time_axis_));
    const std::vector<int64_t> lens = ReadInt64s(*lens_t);
    if (static_cast<int64_t>(lens.size()) != B)
      return absl::InvalidArgumentError("sequence_lens has " + std::to_string(lens.size()) +
                                        " entries for batch size " + std::to_string(B));
    for (int64_t l : lens)
      if (l < 0 || l > T_)
        return absl::InvalidArgumentError("sequence length " + std::to_string(l) +
                                          " is outside [0, " + std::to_string(T_) + "]");
    const int64_t inner = DimProduct(x->dims(), 2, x->rank());
    const int64_t bstride = (batch_axis_ == 0 ? T_ : 1) * inner;
    const int64_t tstride = (time_axis_ == 0 ? B : 1) * inner;
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), x->dims());
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y.data<T>();
      for (int64_t b = 0; b < B; ++b)
        for (int64_t t = 0; t < T_; ++t) {
          const int64_t st = t < lens[b] ? lens[b] - 1 - t : t;
          std::copy_n(src + b * bstride + st * tstride, inner, dst + b * bstride + t * tstride);
        }
    });
    return absl::OkStatus();
  }

 private:
  int64_t batch_axis_, time_axis_;
};

// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two dims.
class Trilu : public Kernel {
 public:
  explicit Trilu(const KernelInfo& info) : upper_(info.node.attr_int("upper", 1) != 0) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return Missing("input");
    if (x->rank() < 2) return absl::InvalidArgumentError("input must have rank >= 2");
    int64_t k = 0;
    if (const Tensor* kt = ctx.input(1)) {
      if (kt->numel() != 1) return absl::InvalidArgumentError("k must be a scalar");
      k = kt->ElementAsInt64(0);
    }
    const int64_t rows = x->dim(-2), cols = x->dim(-1);
    const int64_t mats = rows * cols == 0 ? 0 : x->numel() / (rows * cols);
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), x->dims());
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = y.data<T>();
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t o = (m * rows + i) * cols + j;
            const bool keep = upper_ ? j - i >= k : j - i <= k;
            dst[o] = keep ? src[o] : T{};
          }
    });
    return absl::OkStatus();
  }

 private:
  bool upper_;
};

}  // namespace

void RegisterLayoutKernels(KernelRegistry& r) {
  const auto& all = types::kAll;
  r.Add("Transpose", 1, kMaxOpset, all, Make<Transpose>());
  r.Add("Concat", 1, kMaxOpset, all, Make<Concat>());  // axis default 1 at opset 1
  r.Add("Split", 1, kMaxOpset, all, Make<Split>());    // split input 1/13, num_outputs 18
  r.Add("Slice", 1, kMaxOpset, all, Make<Slice>());    // inputs from 10
  r.Add("Tile", 1, kMaxOpset, all, Make<Tile>());      // tiles/axis inputs before 6
  r.Add("Pad", 1, kMaxOpset, all, Make<Pad>());        // inputs 11, axes 18, wrap 19
  r.Add(TandemKernel("PadGrad", {DataType::kFloat, DataType::kDouble}, Make<PadGrad>()));  // training
  std::vector<DataType> numeric_bool = types::kNumeric;
  numeric_bool.push_back(DataType::kBool);
  r.Add("CenterCropPad", 18, kMaxOpset, numeric_bool, Make<CenterCropPad>());
  r.Add("DepthToSpace", 1, kMaxOpset, all, Make<DepthToSpace>());  // mode from 11
  r.Add("SpaceToDepth", 1, kMaxOpset, all, Make<SpaceToDepth>());
  r.Add("ReverseSequence", 10, kMaxOpset, all, Make<ReverseSequence>());
  r.Add("Trilu", 14, kMaxOpset, all, Make<Trilu>());
}

}  // namespace tandem::cpu
