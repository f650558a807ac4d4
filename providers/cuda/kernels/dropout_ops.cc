// Dropout (opset 12+: ratio and training_mode host inputs, the trainer's step as a 4th
// "counter" input read on the device, attribute seed) and ai.tandem DropoutGrad(dY, mask, ratio,
// training_mode) on the GPU, drawing the masks the CPU draws (ops/dropout_mask.h, dropout.cu). Outside training, or at
// ratio 0, Dropout is the identity (the output aliases X) with an all-true mask.
// A Dropout without a seed attribute draws one per kernel (ops/dropout_seed.h), as
// the CPU's does: the two devices then draw different masks, as two CPU sessions would.
#include <atomic>

#include "ops/dropout_seed.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

// ratio (default 0.5) and training_mode (default false) from the host inputs i, i + 1.
absl::Status ReadMode(const KernelContext& ctx, int i, float* ratio, bool* training) {
  *ratio = 0.5f;
  *training = false;
  if (const Tensor* r = ctx.input(i)) {
    if (r->numel() != 1) return absl::InvalidArgumentError("ratio must be a scalar");
    *ratio = static_cast<float>(r->ElementAsDouble(0));
  }
  if (const Tensor* t = ctx.input(i + 1)) {
    if (t->numel() != 1) return absl::InvalidArgumentError("training_mode must be a scalar");
    *training = t->ElementAsInt64(0) != 0;
  }
  if (*training && !(*ratio >= 0.f && *ratio <= 1.f))  // as the CPU: only a training draw reads it
    return absl::InvalidArgumentError("ratio must be in [0, 1], got " + std::to_string(*ratio));
  return absl::OkStatus();
}

class DropoutKernel : public Kernel {
 public:
  explicit DropoutKernel(const KernelInfo& info) : prov_(ProviderOf(info)), seed_(DropoutSeed(info.node)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    float ratio;
    bool training;
    if (s = ReadMode(ctx, 1, &ratio, &training); !s.ok()) return s;
    const Tensor* c = ctx.input(3);
    if (c && (c->numel() != 1 || c->dtype() != DataType::kInt64))
      return absl::InvalidArgumentError("input 3 (counter) must be an int64 scalar");
    // Without a counter each call draws the next mask, which a recorded CUDA graph could
    // not do (it would replay one mask): the recording fails and the plan launches.
    if (!c && training && ratio != 0.f && prov_.capturing())
      return absl::FailedPreconditionError("a training-mode Dropout without a counter input cannot be recorded");
    const int64_t* device_counter = c ? c->data<int64_t>() : nullptr;
    const Tensor* first = ctx.input(4);  // data-parallel training: the rank's first global row
    if (first && (first->numel() != 1 || first->dtype() != DataType::kInt64))
      return absl::InvalidArgumentError("input 4 (first row) must be an int64 scalar");
    const int64_t row_elements = x.rank() > 0 && x.dim(0) > 0 ? x.numel() / x.dim(0) : 0;
    const uint64_t host_counter = c ? 0 : calls_++;
    bool* mask = nullptr;
    if (ctx.output_wanted(1)) {
      Tensor& m = ctx.AllocateOutput(1, DataType::kBool, x.dims());
      if (m.bytes() && !m.raw()) return absl::ResourceExhaustedError("out of device memory for the Dropout mask");
      mask = m.data<bool>();
    }
    if (!training || ratio == 0.f) {
      ctx.SetOutput(0, x);
      if (mask && x.numel()) TANDEM_CUDA_RETURN(cudaMemsetAsync(mask, 1, static_cast<size_t>(x.numel()), prov_.stream()));
      return absl::OkStatus();
    }
    auto y = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchDropout(x.data<float>(), (*y)->data<float>(), mask, x.numel(), seed_, device_counter,
                                     host_counter, first ? first->data<int64_t>() : nullptr, row_elements, ratio,
                                     prov_.stream()));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  uint64_t seed_;
  std::atomic<uint64_t> calls_{0};
};

class DropoutGradKernel : public Kernel {
 public:
  explicit DropoutGradKernel(const KernelInfo& info) : prov_(ProviderOf(info)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    float ratio;
    bool training;
    if (s = ReadMode(ctx, 2, &ratio, &training); !s.ok()) return s;
    if (!training || ratio <= 0.f) {  // the forward was the identity
      ctx.SetOutput(0, dy);
      return absl::OkStatus();
    }
    const Tensor* mask = ctx.input(1);
    if (!mask || mask->dims() != dy.dims() || mask->dtype() != DataType::kBool)
      return absl::InvalidArgumentError("the mask is missing, not bool, or shaped unlike dY");
    auto dx = Output(ctx, 0, DataType::kFloat, dy.dims());
    if (!dx.ok()) return dx.status();
    TANDEM_CUDA_RETURN(LaunchDropoutGrad(dy.data<float>(), mask->data<bool>(), (*dx)->data<float>(), dy.numel(), ratio,
                                         prov_.stream()));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
};

}  // namespace

void RegisterDropoutKernels(KernelRegistry& r) {
  KernelDef forward = FloatKernel("", "Dropout", 12, kMaxOpset, Make<DropoutKernel>());
  forward.host_inputs = {1, 2};  // ratio, training_mode (the counter is read on the device)
  r.Add(std::move(forward));
  KernelDef grad = FloatKernel("ai.tandem", "DropoutGrad", 1, kMaxOpset, Make<DropoutGradKernel>());
  grad.host_inputs = {2, 3};  // ratio, training_mode
  r.Add(std::move(grad));
}

}  // namespace tandem::cuda
