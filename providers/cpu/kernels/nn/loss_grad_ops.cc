// Loss kernels of the training graph (domain ai.tandem), float and double, accumulated in
// double:
//   BCEWithLogitsLoss(x, t) -> loss          attr reduction = mean | sum | none
//       per element max(x,0) - x*t + log(1 + exp(-|x|))  (stable; torch's formula)
//   BCEWithLogitsLossGrad(dY, x, t) -> (dX [, dT])
//       dX = (sigmoid(x) - t) * dY',  dT = -x * dY'  (dY' = dY/numel | dY | dY elementwise)
//   MSELoss(x, t) -> loss                    attr reduction = mean | sum | none
//       per element (x - t)^2; x and t of the same shape (no broadcasting, like BCE)
//   MSELossGrad(dY, x, t) -> (dX [, dT])
//       dX = 2 (x - t) * dY',  dT = -dX
//   SoftmaxCrossEntropyLossGrad(dY, logits, labels [, weight] [, dLogProb]) -> dLogits
//       gradient of ONNX SoftmaxCrossEntropyLoss (attrs reduction, ignore_index) with the
//       same normalisation as its forward kernel in loss.cc: mean divides by N*D without
//       weight/ignore_index, else by the sum of the weights of the non-ignored targets.
//       dLogits = (softmax - onehot) * w[t] * dY'  (+ dLogProb - softmax * sum(dLogProb)).
//   NegativeLogLikelihoodLossGrad(dY, input, target [, weight]) -> dInput
//       gradient of ONNX NegativeLogLikelihoodLoss, normalised alike: -onehot * w[t] * dY'.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/loss_reduction.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

using Reduction = LossReduction;

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kFloat) {
    const float* p = t.data<float>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    const double* p = t.data<double>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

void StoreDoubles(const std::vector<double>& v, Tensor& t) {
  if (t.dtype() == DataType::kFloat) {
    float* p = t.data<float>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
  } else {
    double* p = t.data<double>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  }
}

bool IsFloatOrDouble(const Tensor& t) {
  return t.dtype() == DataType::kFloat || t.dtype() == DataType::kDouble;
}

// Checks the upstream gradient: a scalar for mean/sum, `elem_dims` for none.
absl::Status CheckDy(const Tensor* dy, Reduction r, const Dims& elem_dims, DataType dt) {
  if (!dy) return absl::OkStatus();
  if (dy->dtype() != dt) return absl::InvalidArgumentError("dY must have the input's element type");
  if (r == Reduction::kNone ? dy->dims() != elem_dims : dy->numel() != 1)
    return absl::InvalidArgumentError("dY has shape " + DimsToString(dy->dims()) + ", expected " +
                                      (r == Reduction::kNone ? DimsToString(elem_dims) : "a scalar"));
  return absl::OkStatus();
}

double Sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

// x and target (t) of one floating type and the same shape (BCE and MSE losses).
absl::Status CheckSameShapeFloats(const Tensor* x, const Tensor* t) {
  if (!x || !t) return absl::InvalidArgumentError("expects inputs (x, target)");
  if (!IsFloatOrDouble(*x) || t->dtype() != x->dtype())
    return absl::InvalidArgumentError("x and target must both be float or both double");
  if (x->dims() != t->dims())
    return absl::InvalidArgumentError("target shape " + DimsToString(t->dims()) +
                                      " differs from input shape " + DimsToString(x->dims()));
  return absl::OkStatus();
}

// Base of the element-wise (x, target) loss kernels: the parsed reduction, and the inputs
// checked — (x, t) for a loss, (dY, x, t) for its gradient.
class ElementwiseLoss : public Kernel {
 protected:
  explicit ElementwiseLoss(const KernelInfo& info) : reduction_(ParseLossReduction(info.node)) {}
  absl::Status Inputs(KernelContext& ctx, const Tensor** dy, const Tensor*& x, const Tensor*& t) const {
    if (!reduction_.ok()) return reduction_.status();
    const int first = dy ? 1 : 0;
    x = ctx.input(first);
    t = ctx.input(first + 1);
    if (auto s = CheckSameShapeFloats(x, t); !s.ok()) return s;
    if (!dy) return absl::OkStatus();
    *dy = ctx.input(0);
    return CheckDy(*dy, *reduction_, x->dims(), x->dtype());
  }
  // dY' of element i of n: dY[i] (reduction none), dY (sum) or dY / n (mean); 0 without dY.
  template <typename T>
  double DyAt(const T* dy, int64_t i, int64_t n) const {
    if (!dy) return 0.0;
    if (*reduction_ == Reduction::kNone) return static_cast<double>(dy[i]);
    const double d = static_cast<double>(dy[0]);
    return *reduction_ == Reduction::kSum ? d : d / static_cast<double>(n);
  }
  absl::StatusOr<Reduction> reduction_;
};

class BceWithLogits : public ElementwiseLoss {
 public:
  explicit BceWithLogits(const KernelInfo& info) : ElementwiseLoss(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor *x = nullptr, *t = nullptr;
    if (auto s = Inputs(ctx, nullptr, x, t); !s.ok()) return s;
    std::vector<double> xv = AsDoubles(*x), tv = AsDoubles(*t);
    std::vector<double> l(xv.size());
    double sum = 0;
    for (size_t i = 0; i < xv.size(); ++i) {
      double a = xv[i];
      l[i] = std::max(a, 0.0) - a * tv[i] + std::log1p(std::exp(-std::fabs(a)));
      sum += l[i];
    }
    if (*reduction_ == Reduction::kNone) {
      Tensor& out = ctx.AllocateOutput(0, x->dtype(), x->dims());
      StoreDoubles(l, out);
      return absl::OkStatus();
    }
    double v = *reduction_ == Reduction::kSum ? sum : sum / static_cast<double>(xv.size());
    Tensor& out = ctx.AllocateOutput(0, x->dtype(), {});
    StoreDoubles({v}, out);
    return absl::OkStatus();
  }
};

class BceWithLogitsGrad : public ElementwiseLoss {
 public:
  explicit BceWithLogitsGrad(const KernelInfo& info) : ElementwiseLoss(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor *dy = nullptr, *x = nullptr, *t = nullptr;
    if (auto s = Inputs(ctx, &dy, x, t); !s.ok()) return s;
    const size_t n = static_cast<size_t>(x->numel());
    std::vector<double> xv = AsDoubles(*x), tv = AsDoubles(*t);
    const std::vector<double> dv = dy ? AsDoubles(*dy) : std::vector<double>();
    std::vector<double> g(n);
    for (size_t i = 0; i < n; ++i)
      g[i] = DyAt(dy ? dv.data() : nullptr, static_cast<int64_t>(i), static_cast<int64_t>(n));
    if (ctx.output_wanted(0)) {
      std::vector<double> dx(n);
      for (size_t i = 0; i < n; ++i) dx[i] = (Sigmoid(xv[i]) - tv[i]) * g[i];
      StoreDoubles(dx, ctx.AllocateOutput(0, x->dtype(), x->dims()));
    }
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      std::vector<double> dt(n);
      for (size_t i = 0; i < n; ++i) dt[i] = -xv[i] * g[i];
      StoreDoubles(dt, ctx.AllocateOutput(1, x->dtype(), x->dims()));
    }
    return absl::OkStatus();
  }
};

// MSELoss and MSELossGrad: one pass over x and t each (the training loss of regression
// models, where the decomposed Sub/Mul/ReduceMean and its gradient cost ten nodes).
template <typename T>
double SquaredErrorSum(const T* x, const T* t, T* per_element, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - static_cast<double>(t[i]);
    if (per_element) per_element[i] = static_cast<T>(d * d);
    sum += d * d;
  }
  return sum;
}

class MseLoss : public ElementwiseLoss {
 public:
  explicit MseLoss(const KernelInfo& info) : ElementwiseLoss(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor *x = nullptr, *t = nullptr;
    if (auto s = Inputs(ctx, nullptr, x, t); !s.ok()) return s;
    const bool none = *reduction_ == Reduction::kNone;
    Tensor& out = ctx.AllocateOutput(0, x->dtype(), none ? x->dims() : Dims{});
    const int64_t n = x->numel();
    auto run = [&](auto* out_data) {
      using T = std::remove_pointer_t<decltype(out_data)>;
      const double sum = SquaredErrorSum(x->data<T>(), t->data<T>(), none ? out_data : nullptr, n);
      if (!none) out_data[0] = static_cast<T>(*reduction_ == Reduction::kSum ? sum : sum / static_cast<double>(n));
    };
    if (x->dtype() == DataType::kFloat) run(out.data<float>());
    else run(out.data<double>());
    return absl::OkStatus();
  }
};

class MseLossGrad : public ElementwiseLoss {
 public:
  explicit MseLossGrad(const KernelInfo& info) : ElementwiseLoss(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor *dy = nullptr, *x = nullptr, *t = nullptr;
    if (auto s = Inputs(ctx, &dy, x, t); !s.ok()) return s;
    const bool want_dx = ctx.output_wanted(0), want_dt = ctx.num_outputs() > 1 && ctx.output_wanted(1);
    Tensor* dx = want_dx ? &ctx.AllocateOutput(0, x->dtype(), x->dims()) : nullptr;
    Tensor* dt = want_dt ? &ctx.AllocateOutput(1, x->dtype(), x->dims()) : nullptr;
    const int64_t n = x->numel();
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* xv = x->data<T>();
      const T* tv = t->data<T>();
      const T* dv = dy ? dy->data<T>() : nullptr;
      T* gx = dx ? dx->data<T>() : nullptr;
      T* gt = dt ? dt->data<T>() : nullptr;
      for (int64_t i = 0; i < n; ++i) {
        const double v = 2.0 * (static_cast<double>(xv[i]) - static_cast<double>(tv[i])) * DyAt(dv, i, n);
        if (gx) gx[i] = static_cast<T>(v);
        if (gt) gt[i] = static_cast<T>(-v);
      }
    };
    if (x->dtype() == DataType::kFloat) run(float{});
    else run(double{});
    return absl::OkStatus();
  }
};

class SoftmaxCrossEntropyGrad : public Kernel {
 public:
  explicit SoftmaxCrossEntropyGrad(const KernelInfo& info)
      : nll_(info.node.op_type == "NegativeLogLikelihoodLossGrad"),
        reduction_(ParseLossReduction(info.node)),
        has_ignore_(info.node.has_attr("ignore_index")),
        ignore_index_(info.node.attr_int("ignore_index", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!reduction_.ok()) return reduction_.status();
    const Tensor* dy = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* labels = ctx.input(2);
    const Tensor* weight = ctx.input(3);
    const Tensor* dlogp = ctx.input(4);
    if (!x || !labels) return absl::InvalidArgumentError("expects inputs (dY, logits, labels, ...)");
    if (!IsFloatOrDouble(*x)) return absl::InvalidArgumentError("logits must be float or double");
    if (x->rank() < 2)
      return absl::InvalidArgumentError("logits must have rank >= 2 ([N, C, ...]), got " +
                                        DimsToString(x->dims()));
    Dims label_dims = {x->dim(0)};
    for (int i = 2; i < x->rank(); ++i) label_dims.push_back(x->dim(i));
    if (labels->dims() != label_dims)
      return absl::InvalidArgumentError("labels shape " + DimsToString(labels->dims()) +
                                        " does not match logits shape " + DimsToString(x->dims()));
    if (labels->dtype() != DataType::kInt32 && labels->dtype() != DataType::kInt64)
      return absl::InvalidArgumentError("labels must be int32 or int64");
    const int64_t n = x->dim(0), c = x->dim(1), d = DimProduct(x->dims(), 2, x->rank());
    if (weight && (weight->dims() != Dims{c} || weight->dtype() != x->dtype()))
      return absl::InvalidArgumentError("weight must be a [C] tensor of the logits' type");
    if (dlogp && (dlogp->dims() != x->dims() || dlogp->dtype() != x->dtype()))
      return absl::InvalidArgumentError("dLogProb must match the logits");
    if (auto s = CheckDy(dy, *reduction_, label_dims, x->dtype()); !s.ok()) return s;

    std::vector<int64_t> tgt = labels->ToInt64Vector();
    std::vector<double> w = weight ? AsDoubles(*weight) : std::vector<double>();
    std::vector<double> dv = dy ? AsDoubles(*dy) : std::vector<double>();
    std::vector<double> gl = dlogp ? AsDoubles(*dlogp) : std::vector<double>();
    // Per-target weights and the mean's normaliser, exactly as the forward kernel.
    std::vector<double> wt(static_cast<size_t>(n * d), 0.0);
    double weight_sum = 0;
    for (int64_t i = 0; i < n * d; ++i) {
      int64_t t = tgt[i];
      if (has_ignore_ && t == ignore_index_) continue;
      if (t < 0 || t >= c)
        return absl::InvalidArgumentError("label " + std::to_string(t) + " is out of range [0, " +
                                          std::to_string(c) + ")");
      wt[i] = weight ? w[t] : 1.0;
      weight_sum += wt[i];
    }
    double denom = 1.0;
    if (*reduction_ == Reduction::kMean)
      denom = (weight || has_ignore_) ? weight_sum : static_cast<double>(n * d);

    std::vector<double> xv = AsDoubles(*x);
    std::vector<double> out(xv.size(), 0.0);
    std::vector<double> sm(static_cast<size_t>(c));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        const int64_t base = i * c * d + j, row = i * d + j;
        if (nll_) {  // the input already holds log-probabilities
          if (dy && wt[row] != 0)
            out[base + tgt[row] * d] = -(*reduction_ == Reduction::kNone ? dv[row] : dv[0] / denom) * wt[row];
          continue;
        }
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < c; ++k) mx = std::max(mx, xv[base + k * d]);
        double s = 0;
        for (int64_t k = 0; k < c; ++k) s += sm[k] = std::exp(xv[base + k * d] - mx);
        for (int64_t k = 0; k < c; ++k) sm[k] /= s;
        double scale = 0;
        if (dy) scale = (*reduction_ == Reduction::kNone ? dv[row] : dv[0] / denom) * wt[row];
        if (scale != 0) {
          for (int64_t k = 0; k < c; ++k) out[base + k * d] = sm[k] * scale;
          out[base + tgt[row] * d] -= scale;
        }
        if (dlogp) {
          double gs = 0;
          for (int64_t k = 0; k < c; ++k) gs += gl[base + k * d];
          for (int64_t k = 0; k < c; ++k) out[base + k * d] += gl[base + k * d] - sm[k] * gs;
        }
      }
    }
    StoreDoubles(out, ctx.AllocateOutput(0, x->dtype(), x->dims()));
    return absl::OkStatus();
  }

 private:
  bool nll_;
  absl::StatusOr<Reduction> reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

}  // namespace

void RegisterLossGradKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble};  // of the prediction
  r.Add(TandemKernel("BCEWithLogitsLoss", t, Make<BceWithLogits>(), 0));
  r.Add(TandemKernel("BCEWithLogitsLossGrad", t, Make<BceWithLogitsGrad>(), 1));
  r.Add(TandemKernel("MSELoss", t, Make<MseLoss>(), 0));
  r.Add(TandemKernel("MSELossGrad", t, Make<MseLossGrad>(), 1));
  r.Add(TandemKernel("SoftmaxCrossEntropyLossGrad", t, Make<SoftmaxCrossEntropyGrad>(), 1));
  r.Add(TandemKernel("NegativeLogLikelihoodLossGrad", t, Make<SoftmaxCrossEntropyGrad>(), 1));
}

}  // namespace tandem::cpu
