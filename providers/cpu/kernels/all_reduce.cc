// The gradients' all-reduce of data-parallel training (training/gradient_all_reduce.h), in
// two ai.tandem nodes so that a bucket's reduction runs while the backward pass goes on:
//   AllReduceStart(g_1..g_N, scale) -> packed
//       packed = [scale * g_1, ..., scale * g_N] (float32, flat), handed to the process's
//       communicator (providers/communicator.h), which starts summing it across the ranks
//       in place and returns at once;
//   AllReduceWait(packed, g_1..g_N) -> (r_1..r_N)
//       waits for that sum; r_i are views of `packed` shaped like g_i (no copies).
// Every rank runs the same nodes in the same order with the same shapes.
#include <string>

#include "providers/communicator.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/grad_util.h"
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

absl::Status FloatGradients(KernelContext& ctx, int first, int count, int64_t* total) {
  *total = 0;
  for (int i = first; i < first + count; ++i) {
    const Tensor* g = ctx.input(i);
    if (!g || g->dtype() != DataType::kFloat)
      return absl::InvalidArgumentError("gradient input " + std::to_string(i) + " must be float32");
    *total += g->numel();
  }
  return absl::OkStatus();
}

class AllReduceStart : public Kernel {
 public:
  explicit AllReduceStart(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    if (n < 1 || ctx.num_outputs() != 1)
      return absl::InvalidArgumentError("expects N gradients and a scale, and one output");
    auto scale = ScalarAsDouble(ctx.input(n), "scale");
    if (!scale.ok()) return scale.status();
    auto comm = Group();
    if (!comm.ok()) return comm.status();
    int64_t total = 0;
    if (absl::Status st = FloatGradients(ctx, 0, n, &total); !st.ok()) return st;
    Tensor& packed = ctx.AllocateOutput(0, DataType::kFloat, {total});
    float* out = packed.data<float>();
    const float s = static_cast<float>(*scale);
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(i);
      const float* p = g.data<float>();
      for (int64_t k = 0; k < g.numel(); ++k) out[k] = s * p[k];
      out += g.numel();
    }
    return (*comm)->StartAllReduceSum(packed.data<float>(), total);
  }
};

class AllReduceWait : public Kernel {
 public:
  explicit AllReduceWait(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    if (n < 1 || ctx.num_outputs() != n)
      return absl::InvalidArgumentError("expects the packed bucket and its N gradients, and N outputs");
    const Tensor* packed = ctx.input(0);
    int64_t total = 0;
    if (absl::Status st = FloatGradients(ctx, 1, n, &total); !st.ok()) return st;
    if (!packed || packed->dtype() != DataType::kFloat || packed->numel() != total)
      return absl::InvalidArgumentError("the packed bucket must hold the " + std::to_string(total) +
                                        " floats of its gradients");
    auto comm = Group();
    if (!comm.ok()) return comm.status();
    if (absl::Status st = (*comm)->WaitAllReduce(packed->data<float>()); !st.ok()) return st;
    int64_t at = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(1 + i);
      ctx.SetOutput(i, packed->Rows(at, at + g.numel()).Reshaped(g.dims()));
      at += g.numel();
    }
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterAllReduceKernels(KernelRegistry& r) {
  r.Add(grad::TandemDef("AllReduceStart", {DataType::kFloat}, Make<AllReduceStart>()));
  r.Add(grad::TandemDef("AllReduceWait", {DataType::kFloat}, Make<AllReduceWait>()));
}

}  // namespace tandem::cpu
