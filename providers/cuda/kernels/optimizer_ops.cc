// Fused optimizer updates on the GPU: one launch per parameter tensor, in place on the
// trainer's resident buffers (same contract and formulas as
// providers/cpu/kernels/optimizer_ops.cc). step and lr are read on the host, so they
// are never copied to the device.
#include <cmath>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"
#include "providers/optimizer_attributes.h"

namespace tandem::cuda {
namespace {

enum class Kind { kSgd, kMomentum, kAdam, kAdamW };

int NumState(Kind k) { return k == Kind::kSgd ? 0 : k == Kind::kMomentum ? 1 : 2; }

absl::StatusOr<double> HostScalar(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing input '") + what + "'");
  if (t->numel() != 1 || t->device().type != DeviceType::kCpu)
    return absl::InvalidArgumentError(std::string("input '") + what + "' must be a host scalar");
  return t->ElementAsDouble(0);
}

class Update : public Kernel {
 public:
  Update(const KernelInfo& info, Kind kind)
      : stream_(ProviderOf(info).stream()), kind_(kind), a_(ReadOptimizerAttributes(info.node)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (!a_.invalid.empty()) return absl::InvalidArgumentError(a_.invalid);
    const int ns = NumState(kind_);
    if (ctx.num_inputs() != 4 + ns)
      return absl::InvalidArgumentError("expects " + std::to_string(4 + ns) + " inputs");
    for (int i = 0; i < 2 + ns; ++i) {
      absl::Status s = RequireFloat(ctx, {i});
      if (!s.ok()) return s;
      if (ctx.input(i)->dims() != ctx.input(0)->dims())
        return absl::InvalidArgumentError("input " + std::to_string(i) + " has shape " +
                                          DimsToString(ctx.input(i)->dims()) + ", param has " +
                                          DimsToString(ctx.input(0)->dims()));
    }
    auto step = HostScalar(ctx.input(2 + ns), "step");
    if (!step.ok()) return step.status();
    auto lr = HostScalar(ctx.input(3 + ns), "lr");
    if (!lr.ok()) return lr.status();
    if (*step < 1) return absl::InvalidArgumentError("step must be >= 1 (1-based)");
    const Tensor& param = *ctx.input(0);
    float* p = const_cast<float*>(param.data<float>());  // in place, see the file header
    const float* g = ctx.input(1)->data<float>();
    float* s0 = ns > 0 ? const_cast<float*>(ctx.input(2)->data<float>()) : nullptr;
    float* s1 = ns > 1 ? const_cast<float*>(ctx.input(3)->data<float>()) : nullptr;
    const int64_t n = param.numel();
    if (kind_ == Kind::kSgd || kind_ == Kind::kMomentum) {
      TANDEM_CUDA_RETURN(LaunchSgd(p, g, s0, n, static_cast<float>(*lr), a_.weight_decay, a_.momentum,
                                   1.f - a_.dampening, *step == 1, a_.nesterov, stream_));
    } else {
      const double bc1 = 1.0 - std::pow(static_cast<double>(a_.beta1), *step);
      const double bc2 = 1.0 - std::pow(static_cast<double>(a_.beta2), *step);
      AdamParams k;
      k.b1c = static_cast<float>(1.0 - a_.beta1);
      k.b2 = a_.beta2;
      k.b2c = static_cast<float>(1.0 - a_.beta2);
      k.eps = a_.epsilon;
      k.bc2_sqrt = static_cast<float>(std::sqrt(bc2));
      k.step_size = static_cast<float>(*lr / bc1);
      k.wd = a_.weight_decay;
      k.shrink = static_cast<float>(1.0 - *lr * a_.weight_decay);
      k.mode = a_.weight_decay == 0 ? 0 : kind_ == Kind::kAdamW ? 2 : 1;
      TANDEM_CUDA_RETURN(LaunchAdam(p, g, s0, s1, n, k, stream_));
    }
    ctx.SetOutput(0, param);
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  Kind kind_;
  OptimizerAttributes a_;
};

template <Kind K>
class UpdateOf : public Update {
 public:
  explicit UpdateOf(const KernelInfo& info) : Update(info, K) {}
};

template <Kind K>
KernelDef UpdateDef(const char* op) {
  KernelDef d = FloatKernel("ai.tandem", op, 1, kMaxOpset, Make<UpdateOf<K>>());
  const int ns = NumState(K);
  d.host_inputs = {2 + ns, 3 + ns};  // step, lr
  return d;
}

}  // namespace

void RegisterOptimizerKernels(KernelRegistry& r) {
  r.Add(UpdateDef<Kind::kSgd>("SGDUpdate"));
  r.Add(UpdateDef<Kind::kMomentum>("MomentumUpdate"));
  r.Add(UpdateDef<Kind::kAdam>("AdamUpdate"));
  r.Add(UpdateDef<Kind::kAdamW>("AdamWUpdate"));
}

}  // namespace tandem::cuda
