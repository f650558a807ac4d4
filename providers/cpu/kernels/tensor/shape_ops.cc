// Shape-only kernels: Reshape, Flatten, Squeeze, Unsqueeze, Identity (all alias their
// input), Shape, Size and Expand. Cast, CastLike and BitCast are in cast_ops.cc.
#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {


absl::Status NeedInput(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing required input '") + what + "'");
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Reshape: `shape` is an input from opset 5 (an attribute before); 0 copies the input dim
// unless allowzero (opset 14), one -1 is inferred. The output aliases the input.
class Reshape : public Kernel {
 public:
  explicit Reshape(const KernelInfo& info)
      : opset_(info.opset),
        allowzero_(info.node.attr_int("allowzero", 0) != 0),
        attr_shape_(info.node.attr_ints("shape")) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    std::vector<int64_t> shape;
    if (opset_ < 5) {
      shape = attr_shape_;
    } else {
      const Tensor* st = ctx.input(1);
      if (!st) return absl::InvalidArgumentError("missing required input 'shape'");
      if (st->rank() > 1) return absl::InvalidArgumentError("input 'shape' must be 1-D");
      shape = ReadInt64s(*st);
    }
    const Dims& in = x->dims();
    Dims out(shape.size());
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = shape[i];
      if (d == 0 && !allowzero_) {
        if (i >= in.size())
          return absl::InvalidArgumentError("shape " + DimsToString(shape) + ": 0 at position " +
                                            std::to_string(i) + " has no input dim to copy (input " +
                                            DimsToString(in) + ")");
        d = in[i];
      } else if (d == -1) {
        if (infer >= 0)
          return absl::InvalidArgumentError("shape " + DimsToString(shape) + " has more than one -1");
        infer = static_cast<int>(i);
        out[i] = -1;
        continue;
      } else if (d < 0) {
        return absl::InvalidArgumentError("shape " + DimsToString(shape) + " has invalid dim " +
                                          std::to_string(d));
      }
      out[i] = d;
      if (d > 0 && known > (int64_t{1} << 62) / d)
        return absl::InvalidArgumentError("shape " + DimsToString(shape) + " is too large");
      known *= d;
    }
    const int64_t n = x->numel();
    if (infer >= 0) {
      if (known == 0 || n % known != 0)
        return absl::InvalidArgumentError("cannot infer the -1 in shape " + DimsToString(shape) +
                                          " for input of shape " + DimsToString(in));
      out[infer] = n / known;
    } else if (known != n) {
      return absl::InvalidArgumentError("cannot reshape input of shape " + DimsToString(in) +
                                        " to " + DimsToString(out));
    }
    ctx.SetOutput(0, x->Reshaped(std::move(out)));
    return absl::OkStatus();
  }

 private:
  int opset_;
  bool allowzero_;
  std::vector<int64_t> attr_shape_;
};

// Flatten: [d0..d(axis-1)] x [d(axis)..] as a 2-D alias of the input.
class Flatten : public Kernel {
 public:
  explicit Flatten(const KernelInfo& info) : axis_(info.node.attr_int("axis", 1)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    const int r = x->rank();
    int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    if (axis < 0 || axis > r)
      return absl::InvalidArgumentError("axis " + std::to_string(axis_) +
                                        " is out of range for rank " + std::to_string(r));
    const int a = static_cast<int>(axis);
    ctx.SetOutput(0, x->Reshaped({DimProduct(x->dims(), 0, a), DimProduct(x->dims(), a, r)}));
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
};

// Squeeze / Unsqueeze: axes from the attribute before opset 13, from input 1 after.
class SqueezeBase : public Kernel {
 public:
  explicit SqueezeBase(const KernelInfo& info)
      : opset_(info.opset),
        has_attr_axes_(info.node.has_attr("axes")),
        attr_axes_(info.node.attr_ints("axes")) {}

 protected:
  // Sets *given to whether axes were specified.
  std::vector<int64_t> Axes(KernelContext& ctx, bool* given) const {
    if (opset_ < 13) {
      *given = has_attr_axes_;
      return attr_axes_;
    }
    const Tensor* a = ctx.input(1);
    *given = a != nullptr;
    return a ? ReadInt64s(*a) : std::vector<int64_t>{};
  }
  int opset_;
  bool has_attr_axes_;
  std::vector<int64_t> attr_axes_;
};

class Squeeze : public SqueezeBase {
 public:
  using SqueezeBase::SqueezeBase;
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    bool given = false;
    std::vector<int64_t> axes = Axes(ctx, &given);
    const int r = x->rank();
    std::vector<bool> drop(r, false);
    if (!given || axes.empty()) {  // no (or empty) axes: drop every size-1 dim
      for (int i = 0; i < r; ++i) drop[i] = x->dim(i) == 1;
    } else {
      for (int64_t a : axes) {
        int64_t n = a < 0 ? a + r : a;
        if (n < 0 || n >= r)
          return absl::InvalidArgumentError("axis " + std::to_string(a) +
                                            " is out of range for rank " + std::to_string(r));
        if (x->dim(static_cast<int>(n)) != 1)
          return absl::InvalidArgumentError("cannot squeeze axis " + std::to_string(a) +
                                            " of size " + std::to_string(x->dim(static_cast<int>(n))) +
                                            " (input shape " + DimsToString(x->dims()) + ")");
        drop[n] = true;
      }
    }
    Dims out;
    for (int i = 0; i < r; ++i)
      if (!drop[i]) out.push_back(x->dim(i));
    ctx.SetOutput(0, x->Reshaped(std::move(out)));
    return absl::OkStatus();
  }
};

class Unsqueeze : public SqueezeBase {
 public:
  using SqueezeBase::SqueezeBase;
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    bool given = false;
    std::vector<int64_t> axes = Axes(ctx, &given);
    if (!given) return absl::InvalidArgumentError("axes are required");
    const int r = x->rank() + static_cast<int>(axes.size());
    std::vector<bool> ins(r, false);
    for (int64_t a : axes) {
      int64_t n = a < 0 ? a + r : a;
      if (n < 0 || n >= r)
        return absl::InvalidArgumentError("axis " + std::to_string(a) +
                                          " is out of range for output rank " + std::to_string(r));
      if (ins[n]) return absl::InvalidArgumentError("axis " + std::to_string(a) + " is repeated");
      ins[n] = true;
    }
    Dims out(r);
    int j = 0;
    for (int i = 0; i < r; ++i) out[i] = ins[i] ? 1 : x->dim(j++);
    ctx.SetOutput(0, x->Reshaped(std::move(out)));
    return absl::OkStatus();
  }
};

class Identity : public Kernel {
 public:
  explicit Identity(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    ctx.SetOutput(0, *x);
    return absl::OkStatus();
  }
};

// Shape: int64 dims of the input, sliced by start/end (opset 15) with clamping.
class Shape : public Kernel {
 public:
  explicit Shape(const KernelInfo& info)
      : start_(info.node.attr_int("start", 0)),
        end_(info.node.attr_int("end", std::numeric_limits<int64_t>::max())),
        sliced_(info.opset >= 15) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    const int64_t r = x->rank();
    int64_t b = 0, e = r;
    if (sliced_) {
      b = start_ < 0 ? start_ + r : start_;
      e = end_ < 0 ? end_ + r : end_;
      b = std::clamp<int64_t>(b, 0, r);
      e = std::clamp<int64_t>(e, 0, r);
    }
    const int64_t n = std::max<int64_t>(e - b, 0);
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt64, {n});
    for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = x->dims()[b + i];
    return absl::OkStatus();
  }

 private:
  int64_t start_, end_;
  bool sliced_;
};

class Size : public Kernel {
 public:
  explicit Size(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (auto s = NeedInput(x, "data"); !s.ok()) return s;
    ctx.AllocateOutput(0, DataType::kInt64, {}).data<int64_t>()[0] = x->numel();
    return absl::OkStatus();
  }
};

// Expand: bidirectional broadcast of the input to `shape`.
class Expand : public Kernel {
 public:
  explicit Expand(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* st = ctx.input(1);
    if (auto s = NeedInput(x, "input"); !s.ok()) return s;
    if (auto s = NeedInput(st, "shape"); !s.ok()) return s;
    if (st->rank() > 1) return absl::InvalidArgumentError("input 'shape' must be 1-D");
    std::vector<int64_t> shape = ReadInt64s(*st);
    for (int64_t d : shape)
      if (d < 0)
        return absl::InvalidArgumentError("shape " + DimsToString(shape) + " has a negative dim");
    auto out = BroadcastShapes(x->dims(), shape);
    if (!out.ok()) return out.status();
    if (auto st = CheckOutputDims(*out); !st.ok()) return st;
    Tensor& y = ctx.AllocateOutput(0, x->dtype(), *out);
    const std::vector<int64_t> strides = BroadcastStrides(x->dims(), *out);
    VisitElementWidth(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      StridedCopy(x->data<T>(), *out, strides, y.data<T>());
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterShapeKernels(KernelRegistry& r) {
  const auto& all = types::kAllAndNarrow;  // these ops move or alias bytes, or read dims
  r.Add("Reshape", 1, kMaxOpset, all, Make<Reshape>());      // attr shape <5, allowzero 14
  r.Add("Flatten", 1, kMaxOpset, all, Make<Flatten>());      // negative axis from 11
  r.Add("Squeeze", 1, kMaxOpset, all, Make<Squeeze>());      // axes input from 13
  r.Add("Unsqueeze", 1, kMaxOpset, all, Make<Unsqueeze>());  // axes input from 13
  r.Add("Identity", 1, kMaxOpset, all, Make<Identity>());
  // Shape and Size read only dims, so their input may stay on any device.
  for (const char* op : {"Shape", "Size"}) {
    KernelDef d;
    d.op = op;
    d.since = 1;
    d.until = kMaxOpset;
    d.types = all;
    d.any_device = true;
    d.create = std::string(op) == "Shape" ? Make<Shape>() : Make<Size>();  // Shape: start/end from 15
    r.Add(std::move(d));
  }
  r.Add("Expand", 8, kMaxOpset, all, Make<Expand>());
}

}  // namespace tandem::cpu
