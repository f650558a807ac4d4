// Optimizer update kernels (domain ai.tandem) for the training graph, with PyTorch's
// torch.optim formulas:
//   SGDUpdate(param, grad, step, lr)                  g = grad + wd*p;  p -= lr*g
//   MomentumUpdate(param, grad, velocity, step, lr)   torch.optim.SGD with momentum
//       (attrs momentum, dampening, nesterov, weight_decay; buf = g on step 1)
//   AdamUpdate(param, grad, m, v, step, lr)           torch.optim.Adam (L2 weight_decay)
//   AdamWUpdate(param, grad, m, v, step, lr)          torch.optim.AdamW (p *= 1 - lr*wd first)
//   Each update op may carry several parameters in one node: (param, grad, state...) once
//   per parameter, then step and lr, with one output per parameter (the trainer's CPU
//   graphs update every parameter in one node).
//   GlobalNormClip(g_1..g_N, max_norm) -> (g_1'..g_N' [, total_norm])
//       torch.nn.utils.clip_grad_norm_: scale = min(1, max_norm / (norm + 1e-6)).
//       max_norm may instead be a float attribute `max_norm` (then every input is a gradient).
//       Unclipped gradients are passed through as aliases of the inputs.
// `step` is an int64 (or int32) scalar, 1-based: the number of the step being taken;
// `lr` a float or double scalar.
//
// IN-PLACE CONTRACT: param and the state tensors (velocity, m, v) are the trainer's own
// buffers, fed to the graph as inputs. The update kernels write them in place (casting
// away the const of KernelContext::input) and output param as an alias of input 0 so the
// node is not dead code. The trainer must therefore (1) feed buffers that nothing else
// reads concurrently and (2) schedule these nodes after every other reader of the param.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/optimizer_attributes.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

constexpr int64_t kParallelMin = 1 << 15;

enum class Kind { kSgd, kMomentum, kAdam, kAdamW };

int NumState(Kind k) { return k == Kind::kSgd ? 0 : k == Kind::kMomentum ? 1 : 2; }

template <typename T>
struct AdamConsts {
  T b1c, b2, b2c, eps, bc2_sqrt, step_size, wd, shrink;
};

// The Adam/AdamW element loop, branch-free per weight-decay mode (0 none, 1 L2 added to
// the gradient, 2 decoupled shrink), in chunks shared among the threads. GCC vectorizes
// it only without errno-setting sqrt: CMakeLists.txt builds this file with
// -fno-math-errno (v >= 0 here, so errno never matters).
template <typename T, int kMode>
void AdamChunk(T* __restrict p, const T* __restrict g, T* __restrict m1, T* __restrict m2,
               int64_t begin, int64_t end, const AdamConsts<T>& k) {
  for (int64_t i = begin; i < end; ++i) {
    T d = g[i];
    T pv = p[i];
    if constexpr (kMode == 2) pv *= k.shrink;
    if constexpr (kMode == 1) d += k.wd * pv;
    const T m = m1[i] + k.b1c * (d - m1[i]);  // torch: exp_avg.lerp_(grad, 1 - beta1)
    const T v = k.b2 * m2[i] + k.b2c * d * d;
    m1[i] = m;
    m2[i] = v;
    const T denom = std::sqrt(v) / k.bc2_sqrt + k.eps;
    p[i] = pv - k.step_size * (m / denom);
  }
}

template <typename T, int kMode>
void AdamLoop(T* p, const T* g, T* m1, T* m2, int64_t n, const AdamConsts<T>& k) {
  constexpr int64_t kChunk = 1 << 13;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  ParallelForIf(n > kParallelMin, chunks, [&](int64_t c) {
    AdamChunk<T, kMode>(p, g, m1, m2, c * kChunk, std::min(n, (c + 1) * kChunk), k);
  });
}

class OptimizerUpdate : public Kernel {
 public:
  OptimizerUpdate(const KernelInfo& info, Kind kind)
      : kind_(kind), a_(ReadOptimizerAttributes(info.node)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!a_.invalid.empty()) return absl::InvalidArgumentError(a_.invalid);
    const int ns = NumState(kind_);
    const int group = 2 + ns;  // param, grad, state...
    const int groups = (ctx.num_inputs() - 2) / group;
    if (ctx.num_inputs() < group + 2 || (ctx.num_inputs() - 2) % group != 0)
      return absl::InvalidArgumentError("expects (param, grad, " +
                                        std::string(ns == 0 ? "" : ns == 1 ? "velocity, " : "m, v, ") +
                                        ") per parameter, then step and lr: " + std::to_string(group) +
                                        " inputs per parameter + 2, got " + std::to_string(ctx.num_inputs()));
    if (ctx.num_outputs() != groups)
      return absl::InvalidArgumentError("expects one output per parameter (" + std::to_string(groups) +
                                        "), got " + std::to_string(ctx.num_outputs()));
    auto step = ScalarAsDouble(ctx.input(groups * group), "step");
    if (!step.ok()) return step.status();
    auto lr = ScalarAsDouble(ctx.input(groups * group + 1), "lr");
    if (!lr.ok()) return lr.status();
    if (*step < 1) return absl::InvalidArgumentError("step must be >= 1 (1-based), got " +
                                                     std::to_string(static_cast<int64_t>(*step)));
    for (int k = 0; k < groups; ++k) {
      const int base = k * group;
      // Names the parameter in errors (built only then: this loop runs every step).
      auto which = [&] { return groups > 1 ? "parameter " + std::to_string(k + 1) + ": " : std::string(); };
      const Tensor* param = ctx.input(base);
      if (!param) return absl::InvalidArgumentError(which() + "missing param");
      for (int i = 0; i <= ns; ++i) {  // grad, then the state inputs
        const Tensor* t = ctx.input(base + 1 + i);
        if (t && t->dtype() == param->dtype() && t->dims() == param->dims()) continue;
        const std::string what = which() + (i == 0 ? "grad" : "state input " + std::to_string(i + 1));
        if (!t) return absl::InvalidArgumentError("missing " + what);
        if (t->dtype() != param->dtype())
          return absl::InvalidArgumentError(what + " has type " + DataTypeName(t->dtype()) +
                                            ", param has " + DataTypeName(param->dtype()));
        return absl::InvalidArgumentError(what + " has shape " + DimsToString(t->dims()) + ", param has " +
                                          DimsToString(param->dims()));
      }
      for (int i = 0; i < ns; ++i)
        if (ctx.input(base + 2 + i)->raw() == param->raw() && param->numel() > 0)
          return absl::InvalidArgumentError(which() + "state input shares memory with param");
      if (param->dtype() == DataType::kFloat) Update<float>(ctx, base, ns, *step, *lr);
      else if (param->dtype() == DataType::kDouble) Update<double>(ctx, base, ns, *step, *lr);
      else return absl::InvalidArgumentError(which() + "param must be float or double");
      ctx.SetOutput(k, *param);
    }
    return absl::OkStatus();
  }

 private:
  // Updates the parameter whose (param, grad, state...) inputs start at `base`.
  template <typename T>
  void Update(KernelContext& ctx, int base, int ns, double step, double lr_d) {
    // In-place update of the trainer's buffers (see the file header).
    T* p = const_cast<T*>(ctx.input(base)->data<T>());
    const T* g = ctx.input(base + 1)->data<T>();
    T* s0 = ns > 0 ? const_cast<T*>(ctx.input(base + 2)->data<T>()) : nullptr;
    T* s1 = ns > 1 ? const_cast<T*>(ctx.input(base + 3)->data<T>()) : nullptr;
    const int64_t n = ctx.input(base)->numel();
    const T lr = static_cast<T>(lr_d);
    const T wd = static_cast<T>(a_.weight_decay);
    switch (kind_) {
      case Kind::kSgd: {
        ParallelFor(n, [&](int64_t i) {
          T d = g[i];
          if (a_.weight_decay != 0) d += wd * p[i];
          p[i] -= lr * d;
        }, kParallelMin + 1);
        break;
      }
      case Kind::kMomentum: {
        const T mu = static_cast<T>(a_.momentum);
        const T damp = static_cast<T>(1.0 - static_cast<double>(a_.dampening));
        const bool first = step == 1;
        const bool nesterov = a_.nesterov;
        ParallelFor(n, [&](int64_t i) {
          T d = g[i];
          if (a_.weight_decay != 0) d += wd * p[i];
          T buf = first ? d : mu * s0[i] + damp * d;
          s0[i] = buf;
          if (nesterov) d = d + mu * buf;
          else d = buf;
          p[i] -= lr * d;
        }, kParallelMin + 1);
        break;
      }
      case Kind::kAdam:
      case Kind::kAdamW: {
        const double bc1 = 1.0 - std::pow(static_cast<double>(a_.beta1), step);
        const double bc2 = 1.0 - std::pow(static_cast<double>(a_.beta2), step);
        const T step_size = static_cast<T>(lr_d / bc1);
        const T bc2_sqrt = static_cast<T>(std::sqrt(bc2));
        const T b1c = static_cast<T>(1.0 - static_cast<double>(a_.beta1));
        const T b2 = static_cast<T>(a_.beta2);
        const T b2c = static_cast<T>(1.0 - static_cast<double>(a_.beta2));
        const T eps = static_cast<T>(a_.epsilon);
        const bool decoupled = kind_ == Kind::kAdamW;
        const T shrink = static_cast<T>(1.0 - lr_d * static_cast<double>(a_.weight_decay));
        const bool use_wd = a_.weight_decay != 0;
        const AdamConsts<T> k{b1c, b2, b2c, eps, bc2_sqrt, step_size, wd, shrink};
        if (!use_wd) AdamLoop<T, 0>(p, g, s0, s1, n, k);
        else if (decoupled) AdamLoop<T, 2>(p, g, s0, s1, n, k);
        else AdamLoop<T, 1>(p, g, s0, s1, n, k);
        break;
      }
    }
  }

  Kind kind_;
  OptimizerAttributes a_;
};

template <Kind K>
class UpdateOf : public OptimizerUpdate {
 public:
  explicit UpdateOf(const KernelInfo& info) : OptimizerUpdate(info, K) {}
};

class GlobalNormClip : public Kernel {
 public:
  explicit GlobalNormClip(const KernelInfo& info)
      : has_attr_(info.node.has_attr("max_norm")), attr_(info.node.attr_float("max_norm", 0.f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    // max_norm: attribute when present, else the last input.
    const int n = ctx.num_inputs() - (has_attr_ ? 0 : 1);
    if (n < 1)
      return absl::InvalidArgumentError(has_attr_ ? "expects at least one gradient"
                                                  : "expects gradients followed by max_norm");
    if (ctx.num_outputs() != n && ctx.num_outputs() != n + 1)
      return absl::InvalidArgumentError("expects " + std::to_string(n) + " outputs (plus optionally "
                                        "the total norm), got " + std::to_string(ctx.num_outputs()));
    absl::StatusOr<double> max_norm = static_cast<double>(attr_);
    if (!has_attr_) max_norm = ScalarAsDouble(ctx.input(n), "max_norm");
    if (!max_norm.ok()) return max_norm.status();
    if (!(*max_norm > 0)) return absl::InvalidArgumentError("max_norm must be > 0");
    DataType dt = DataType::kUndefined;
    for (int i = 0; i < n; ++i) {
      const Tensor* g = ctx.input(i);
      if (!g) return absl::InvalidArgumentError("missing gradient input " + std::to_string(i));
      if (g->dtype() != DataType::kFloat && g->dtype() != DataType::kDouble)
        return absl::InvalidArgumentError("gradient input " + std::to_string(i) +
                                          " must be float or double");
      if (dt != DataType::kUndefined && g->dtype() != dt)
        return absl::InvalidArgumentError("gradients must share one element type");
      dt = g->dtype();
    }
    // Total L2 norm over all gradients, accumulated in double.
    double sq = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(i);
      const int64_t m = g.numel();
      double part = 0;
      if (dt == DataType::kFloat) {
        const float* p = g.data<float>();
#pragma omp parallel for reduction(+ : part) if (m > kParallelMin)
        for (int64_t k = 0; k < m; ++k) part += static_cast<double>(p[k]) * p[k];
      } else {
        const double* p = g.data<double>();
#pragma omp parallel for reduction(+ : part) if (m > kParallelMin)
        for (int64_t k = 0; k < m; ++k) part += p[k] * p[k];
      }
      sq += part;
    }
    const double norm = std::sqrt(sq);
    const double coef = std::min(1.0, *max_norm / (norm + 1e-6));
    for (int i = 0; i < n; ++i) {
      if (!ctx.output_wanted(i)) continue;
      const Tensor& g = *ctx.input(i);
      if (coef >= 1.0) {  // unchanged: alias the input
        ctx.SetOutput(i, g);
        continue;
      }
      Tensor& out = ctx.AllocateOutput(i, dt, g.dims());
      const int64_t m = g.numel();
      if (dt == DataType::kFloat) Scale<float>(g, out, m, coef);
      else Scale<double>(g, out, m, coef);
    }
    if (ctx.num_outputs() == n + 1 && ctx.output_wanted(n)) {
      Tensor& out = ctx.AllocateOutput(n, dt, {});
      if (dt == DataType::kFloat) out.data<float>()[0] = static_cast<float>(norm);
      else out.data<double>()[0] = norm;
    }
    return absl::OkStatus();
  }

 private:
  template <typename T>
  static void Scale(const Tensor& g, Tensor& out, int64_t m, double coef) {
    const T c = static_cast<T>(coef);
    const T* src = g.data<T>();
    T* dst = out.data<T>();
    ParallelFor(m, [&](int64_t k) { dst[k] = src[k] * c; }, kParallelMin + 1);
  }
  bool has_attr_;
  float attr_;
};

KernelDef Def(const std::string& op, KernelFactory f) {  // updates its parameter and state inputs
  KernelDef d = TandemKernel(op, {DataType::kFloat, DataType::kDouble}, std::move(f));
  d.updates_inputs_in_place = true;
  return d;
}

}  // namespace

void RegisterOptimizerKernels(KernelRegistry& r) {
  r.Add(Def("SGDUpdate", Make<UpdateOf<Kind::kSgd>>()));
  r.Add(Def("MomentumUpdate", Make<UpdateOf<Kind::kMomentum>>()));
  r.Add(Def("AdamUpdate", Make<UpdateOf<Kind::kAdam>>()));
  r.Add(Def("AdamWUpdate", Make<UpdateOf<Kind::kAdamW>>()));
  r.Add(Def("GlobalNormClip", Make<GlobalNormClip>()));
}

}  // namespace tandem::cpu
