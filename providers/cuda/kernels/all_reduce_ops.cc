// The gradients' all-reduce of data-parallel training on the GPU (arguments:
// framework/all_reduce_bucket.h), summed by NCCL across the ranks (providers/cuda/nccl_group.h):
// AllReduceStart packs scale * g_i into one device buffer (scale is read on the device)
// and starts its sum on the group's stream; AllReduceWait makes the compute stream wait
// for it and returns views of the sum. Neither blocks the host.
// A sum across processes is not recorded into a CUDA graph: when a plan tries, Start
// refuses and the plan launches its kernels instead.
#include "framework/all_reduce_bucket.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"
#include "providers/cuda/nccl_group.h"

namespace tandem::cuda {
namespace {

absl::StatusOr<NcclGroup*> Group(CudaProvider& prov) {
  Communicator* comm = prov.communicator();
  if (!comm)
    return absl::FailedPreconditionError("no process group to reduce across: the all-reduce runs in data-parallel "
                                         "training, started by a launcher (mpirun ... tandem train --distributed)");
  return NcclGroup::Of(*prov.context(), *comm);
}

class AllReduceStart : public Kernel {
 public:
  explicit AllReduceStart(const KernelInfo& info) : prov_(ProviderOf(info)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (prov_.capturing())
      return absl::FailedPreconditionError("a sum across processes (NCCL) is not recorded into a CUDA graph");
    auto total = StartBucketFloats(ctx);
    if (!total.ok()) return total.status();
    const int n = ctx.num_inputs() - 1;
    const Tensor* scale = ctx.input(n);
    if (!scale || scale->numel() != 1 || scale->dtype() != DataType::kFloat)
      return absl::InvalidArgumentError("input " + std::to_string(n) + " (scale) must be a float32 scalar");
    auto group = Group(prov_);
    if (!group.ok()) return group.status();
    auto packed = Output(ctx, 0, DataType::kFloat, {*total});
    if (!packed.ok()) return packed.status();
    float* out = (*packed)->data<float>();
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(i);
      StridedIndex times_scale;  // out = g * scale, the scalar broadcast (stride 0)
      times_scale.rank = 1;
      times_scale.dims[0] = g.numel();
      times_scale.stride_a[0] = 1;
      if (g.numel())
        TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kMul, g.data<float>(), scale->data<float>(), out, g.numel(),
                                        &times_scale, 0.f, prov_.stream()));
      out += g.numel();
    }
    return (*group)->Start((*packed)->data<float>(), *total, prov_.stream());
  }

 private:
  CudaProvider& prov_;
};

class AllReduceWait : public Kernel {
 public:
  explicit AllReduceWait(const KernelInfo& info) : prov_(ProviderOf(info)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (auto total = WaitBucketFloats(ctx); !total.ok()) return total.status();
    auto group = Group(prov_);
    if (!group.ok()) return group.status();
    if (absl::Status st = (*group)->Wait(ctx.input(0)->data<float>(), prov_.stream()); !st.ok()) return st;
    SetBucketViews(ctx);
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
};

}  // namespace

void RegisterAllReduceKernels(KernelRegistry& r) {
  r.Add(FloatKernel("ai.tandem", "AllReduceStart", 1, kMaxOpset, Make<AllReduceStart>()));
  r.Add(FloatKernel("ai.tandem", "AllReduceWait", 1, kMaxOpset, Make<AllReduceWait>()));
}

}  // namespace tandem::cuda
