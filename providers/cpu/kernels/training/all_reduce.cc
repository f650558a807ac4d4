// The gradients' all-reduce of data-parallel training on the CPU (arguments:
// framework/all_reduce_bucket.h): AllReduceStart packs scale * g_i into one buffer and hands
// it to the process's communicator (framework/communicator.h), which starts summing it
// across the ranks in place and returns at once; AllReduceWait waits for that sum and
// returns views of it. Every rank runs the same nodes in the same order with the same shapes.
#include <string>

#include "framework/all_reduce_bucket.h"
#include "framework/communicator.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

absl::StatusOr<Communicator*> Group() {
  Communicator* comm = ProcessCommunicator();
  if (!comm)
    return absl::FailedPreconditionError("no process group to reduce across: the all-reduce runs in data-parallel "
                                         "training, started by a launcher (mpirun ... tandem train --distributed)");
  return comm;
}

class AllReduceStart : public Kernel {
 public:
  explicit AllReduceStart(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    auto total = StartBucketFloats(ctx);
    if (!total.ok()) return total.status();
    const int n = ctx.num_inputs() - 1;
    auto scale = ScalarAsDouble(ctx.input(n), "scale");
    if (!scale.ok()) return scale.status();
    auto comm = Group();
    if (!comm.ok()) return comm.status();
    Tensor& packed = ctx.AllocateOutput(0, DataType::kFloat, {*total});
    float* out = packed.data<float>();
    const float s = static_cast<float>(*scale);
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(i);
      const float* p = g.data<float>();
      for (int64_t k = 0; k < g.numel(); ++k) out[k] = s * p[k];
      out += g.numel();
    }
    return (*comm)->StartAllReduceSum(packed.data<float>(), *total);
  }
};

class AllReduceWait : public Kernel {
 public:
  explicit AllReduceWait(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (auto total = WaitBucketFloats(ctx); !total.ok()) return total.status();
    auto comm = Group();
    if (!comm.ok()) return comm.status();
    if (absl::Status st = (*comm)->WaitAllReduce(ctx.input(0)->data<float>()); !st.ok()) return st;
    SetBucketViews(ctx);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterAllReduceKernels(KernelRegistry& r) {
  r.Add(TandemKernel("AllReduceStart", {DataType::kFloat}, Make<AllReduceStart>()));
  r.Add(TandemKernel("AllReduceWait", {DataType::kFloat}, Make<AllReduceWait>()));
}

}  // namespace tandem::cpu
