// Optimizer kernels of the "ai.onnx.preview.training" domain: Adagrad, Adam and Momentum
// (standard and Nesterov). Each updates n tensors at once: inputs are R, T, then n values
// X, n gradients G and the per-tensor state (H; V and H; V), outputs the new X then the
// new state. Gradients and state broadcast against X (numpy rules). Math is in double.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

const char kTrainingDomain[] = "ai.onnx.preview.training";

// Shared plumbing: reads R and T, checks the tensor groups and walks each X with its
// broadcast companions. `groups` is the number of tensors per optimized X (X, G, state...).
class OptimizerBase : public Kernel {
 protected:
  struct Scalars {
    double r = 0;
    int64_t t = 0;
  };

  absl::StatusOr<Scalars> ReadScalars(KernelContext& ctx) const {
    const Tensor* r = ctx.input(0);
    const Tensor* t = ctx.input(1);
    if (!r || !r->is_tensor() || r->numel() != 1 ||
        (r->dtype() != DataType::kFloat && r->dtype() != DataType::kDouble))
      return absl::InvalidArgumentError("input 'R' must be a float or double scalar");
    if (!t || !t->is_tensor() || t->numel() != 1 || t->dtype() != DataType::kInt64)
      return absl::InvalidArgumentError("input 'T' must be an int64 scalar");
    return Scalars{r->ElementAsDouble(0), t->data<int64_t>()[0]};
  }

  // Number of optimized tensors n, after checking input/output counts and types.
  absl::StatusOr<int> CheckGroups(KernelContext& ctx, int groups, int out_groups) const {
    const int rest = ctx.num_inputs() - 2;
    if (rest <= 0 || rest % groups != 0)
      return absl::InvalidArgumentError(absl::StrCat("expected R, T and a multiple of ", groups,
                                                     " tensors, got ", ctx.num_inputs(), " inputs"));
    const int n = rest / groups;
    if (ctx.num_outputs() > out_groups * n)
      return absl::InvalidArgumentError(absl::StrCat("at most ", out_groups * n, " outputs for ", n,
                                                     " optimized tensors, got ", ctx.num_outputs()));
    for (int i = 2; i < ctx.num_inputs(); ++i) {
      const Tensor* v = ctx.input(i);
      if (!v || !v->is_tensor())
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " is missing"));
      const Tensor* x = ctx.input(2 + (i - 2) % n);
      if (v->dtype() != x->dtype() || (v->dtype() != DataType::kFloat && v->dtype() != DataType::kDouble))
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " has type ", DataTypeName(v->dtype()),
                                                       "; X, G and state tensors must all be float or all double"));
      auto b = BroadcastShapes(v->dims(), x->dims());
      if (!b.ok() || *b != x->dims())
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " of shape ", DimsToString(v->dims()),
                                                       " does not broadcast to X's shape ",
                                                       DimsToString(x->dims())));
    }
    return n;
  }

  // For optimized tensor j: calls f(in_values, out_values) per element of X, where
  // in_values holds X, G, state... (doubles) and f fills out_values (out_groups doubles),
  // which are stored to outputs j, n + j, ... (those that are wanted).
  template <typename F>
  void Apply(KernelContext& ctx, int n, int j, int groups, int out_groups, F&& f) {
    const Tensor& x = *ctx.input(2 + j);
    const Dims& dims = x.dims();
    std::vector<const Tensor*> ins;
    std::vector<std::vector<int64_t>> strides;
    for (int g = 0; g < groups; ++g) {
      ins.push_back(ctx.input(2 + g * n + j));
      strides.push_back(BroadcastStrides(ins.back()->dims(), dims));
    }
    std::vector<Tensor*> outs(out_groups, nullptr);
    for (int g = 0; g < out_groups; ++g) {
      int o = g * n + j;
      if (o < ctx.num_outputs() && ctx.output_wanted(o)) outs[g] = &ctx.AllocateOutput(o, x.dtype(), dims);
    }
    std::vector<double> in_v(groups), out_v(out_groups);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      ForEachBroadcast(dims, strides, [&](int64_t linear, const std::vector<int64_t>& off) {
        for (int g = 0; g < groups; ++g) in_v[g] = static_cast<double>(ins[g]->data<T>()[off[g]]);
        f(in_v, out_v);
        for (int g = 0; g < out_groups; ++g)
          if (outs[g]) outs[g]->data<T>()[linear] = static_cast<T>(out_v[g]);
      });
    };
    if (x.dtype() == DataType::kFloat) run(float{});
    else run(double{});
  }
};

class Adagrad : public OptimizerBase {
 public:
  explicit Adagrad(const KernelInfo& info)
      : epsilon_(info.node.attr_float("epsilon", 1e-6f)),
        decay_(info.node.attr_float("decay_factor", 0.f)),
        norm_(info.node.attr_float("norm_coefficient", 0.f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto s = ReadScalars(ctx);
    if (!s.ok()) return s.status();
    auto n = CheckGroups(ctx, 3, 2);
    if (!n.ok()) return n.status();
    const double r = s->r / (1.0 + static_cast<double>(s->t) * decay_);
    for (int j = 0; j < *n; ++j)
      Apply(ctx, *n, j, 3, 2, [&](const std::vector<double>& in, std::vector<double>& out) {
        const double x = in[0], g = norm_ * x + in[1];
        const double h = in[2] + g * g;
        out[0] = x - r * g / (std::sqrt(h) + epsilon_);
        out[1] = h;
      });
    return absl::OkStatus();
  }

 private:
  double epsilon_, decay_, norm_;
};

class Momentum : public OptimizerBase {
 public:
  explicit Momentum(const KernelInfo& info)
      : alpha_(info.node.attr_float("alpha", 0.f)),
        beta_(info.node.attr_float("beta", 0.f)),
        norm_(info.node.attr_float("norm_coefficient", 0.f)),
        mode_(info.node.attr_string("mode", "")),
        complete_(info.node.has_attr("alpha") && info.node.has_attr("beta") &&
                  info.node.has_attr("norm_coefficient") && info.node.has_attr("mode")) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (!complete_)
      return absl::InvalidArgumentError("attributes 'alpha', 'beta', 'norm_coefficient' and 'mode' are required");
    if (mode_ != "standard" && mode_ != "nesterov")
      return absl::InvalidArgumentError("attribute 'mode' must be 'standard' or 'nesterov', got '" + mode_ + "'");
    auto s = ReadScalars(ctx);
    if (!s.ok()) return s.status();
    auto n = CheckGroups(ctx, 3, 2);
    if (!n.ok()) return n.status();
    const double beta = s->t > 0 ? beta_ : 1.0, r = s->r;
    const bool nesterov = mode_ == "nesterov";
    for (int j = 0; j < *n; ++j)
      Apply(ctx, *n, j, 3, 2, [&](const std::vector<double>& in, std::vector<double>& out) {
        const double x = in[0], g = norm_ * x + in[1];
        const double v = alpha_ * in[2] + beta * g;
        out[0] = nesterov ? x - r * (g + alpha_ * v) : x - r * v;
        out[1] = v;
      });
    return absl::OkStatus();
  }

 private:
  double alpha_, beta_, norm_;
  std::string mode_;
  bool complete_;
};

class Adam : public OptimizerBase {
 public:
  explicit Adam(const KernelInfo& info)
      : alpha_(info.node.attr_float("alpha", 0.9f)),
        beta_(info.node.attr_float("beta", 0.999f)),
        norm_(info.node.attr_float("norm_coefficient", 0.f)),
        norm_post_(info.node.attr_float("norm_coefficient_post", 0.f)),
        epsilon_(info.node.attr_float("epsilon", 1e-6f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    auto s = ReadScalars(ctx);
    if (!s.ok()) return s.status();
    auto n = CheckGroups(ctx, 4, 3);
    if (!n.ok()) return n.status();
    double r = s->r;
    if (s->t > 0) {
      const double t = static_cast<double>(s->t);
      r = r * std::sqrt(1.0 - std::pow(beta_, t)) / (1.0 - std::pow(alpha_, t));
    }
    for (int j = 0; j < *n; ++j)
      Apply(ctx, *n, j, 4, 3, [&](const std::vector<double>& in, std::vector<double>& out) {
        const double x = in[0], g = norm_ * x + in[1];
        const double v = alpha_ * in[2] + (1.0 - alpha_) * g;
        const double h = beta_ * in[3] + (1.0 - beta_) * g * g;
        const double x_new = x - r * v / (std::sqrt(h) + epsilon_);
        out[0] = (1.0 - norm_post_) * x_new;
        out[1] = v;
        out[2] = h;
      });
    return absl::OkStatus();
  }

 private:
  double alpha_, beta_, norm_, norm_post_, epsilon_;
};

void AddTraining(KernelRegistry& r, const std::string& op, KernelFactory f) {
  KernelDef def;
  def.domain = kTrainingDomain;
  def.op = op;
  def.since = 1;
  def.until = kMaxOpset;
  def.types = {DataType::kFloat, DataType::kDouble};  // of input 0, R
  def.create = std::move(f);
  r.Add(std::move(def));
}

}  // namespace

void RegisterTrainingKernels(KernelRegistry& r) {
  AddTraining(r, "Adagrad", Make<Adagrad>());
  AddTraining(r, "Adam", Make<Adam>());
  AddTraining(r, "Momentum", Make<Momentum>());
}

}  // namespace tandem::cpu
