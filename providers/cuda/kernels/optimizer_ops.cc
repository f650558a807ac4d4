// Fused optimizer updates on the GPU: one launch per parameter tensor, in place on the
// trainer's resident buffers (same contract and formulas as
// providers/cpu/kernels/training/optimizer_ops.cc). step (int64) and lr (float) are device
// scalars, read by the update kernels themselves: a recorded CUDA graph then replays each
// step with the values copied there for it. The trainer feeds step >= 1 (the CPU kernel
// checks it; here a bad step would only show on the device).
#include "ops/optimizer_attributes.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

enum class Kind { kSgd, kMomentum, kAdam, kAdamW };

int NumState(Kind k) { return k == Kind::kSgd ? 0 : k == Kind::kMomentum ? 1 : 2; }

absl::Status RequireScalar(const Tensor* t, DataType dtype, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing input '") + what + "'");
  if (t->numel() != 1 || t->dtype() != dtype)
    return absl::InvalidArgumentError(std::string("input '") + what + "' must be a " + DataTypeName(dtype) +
                                      " scalar, got " + DataTypeName(t->dtype()) + " " + DimsToString(t->dims()));
  return absl::OkStatus();
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
    if (absl::Status s = RequireScalar(ctx.input(2 + ns), DataType::kInt64, "step"); !s.ok()) return s;
    if (absl::Status s = RequireScalar(ctx.input(3 + ns), DataType::kFloat, "lr"); !s.ok()) return s;
    const int64_t* step = ctx.input(2 + ns)->data<int64_t>();
    const float* lr = ctx.input(3 + ns)->data<float>();
    const Tensor& param = *ctx.input(0);
    float* p = const_cast<float*>(param.data<float>());  // in place, see the file header
    const float* g = ctx.input(1)->data<float>();
    float* s0 = ns > 0 ? const_cast<float*>(ctx.input(2)->data<float>()) : nullptr;
    float* s1 = ns > 1 ? const_cast<float*>(ctx.input(3)->data<float>()) : nullptr;
    const int64_t n = param.numel();
    if (kind_ == Kind::kSgd || kind_ == Kind::kMomentum) {
      TANDEM_CUDA_RETURN(LaunchSgd(p, g, s0, n, step, lr, a_.weight_decay, a_.momentum, 1.f - a_.dampening,
                                   a_.nesterov, stream_));
    } else {
      AdamParams k;
      k.beta1 = a_.beta1;
      k.beta2 = a_.beta2;
      k.weight_decay = a_.weight_decay;
      k.b1c = static_cast<float>(1.0 - a_.beta1);
      k.b2 = a_.beta2;
      k.b2c = static_cast<float>(1.0 - a_.beta2);
      k.eps = a_.epsilon;
      k.wd = a_.weight_decay;
      k.mode = a_.weight_decay == 0 ? 0 : kind_ == Kind::kAdamW ? 2 : 1;
      TANDEM_CUDA_RETURN(LaunchAdam(p, g, s0, s1, n, step, lr, k, stream_));
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
  d.updates_inputs_in_place = true;  // the parameter and its state
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
