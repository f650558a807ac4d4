// AllReduce (ai.tandem, from data-parallel training: training/training_graph.h):
//   AllReduce(g_1..g_N, scale) -> (r_1..r_N),  r_i = sum over ranks of scale * g_i
// float32 gradients of one bucket, summed across the processes of the job through the
// process's communicator (providers/communicator.h) in one call: the bucket is packed into
// one buffer (each gradient times this rank's scalar `scale`, its share of the global
// batch), reduced in place and unpacked into the outputs. Every rank runs the same
// AllReduce nodes in the same order with the same shapes.
#include <algorithm>
#include <cstring>
#include <vector>

#include "providers/communicator.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/grad_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

class AllReduce : public Kernel {
 public:
  explicit AllReduce(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    if (n < 1 || ctx.num_outputs() != n)
      return absl::InvalidArgumentError("expects N gradients and a scale, and N outputs; got " +
                                        std::to_string(ctx.num_inputs()) + " inputs and " +
                                        std::to_string(ctx.num_outputs()) + " outputs");
    auto scale = ScalarAsDouble(ctx.input(n), "scale");
    if (!scale.ok()) return scale.status();
    Communicator* comm = ProcessCommunicator();
    if (!comm)
      return absl::FailedPreconditionError("no process group to reduce across: AllReduce runs in data-parallel "
                                           "training, started by a launcher (mpirun ... tandem train --distributed)");
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor* g = ctx.input(i);
      if (!g || g->dtype() != DataType::kFloat)
        return absl::InvalidArgumentError("gradient input " + std::to_string(i) + " must be float32");
      total += g->numel();
    }
    buffer_.resize(static_cast<size_t>(total));
    const float s = static_cast<float>(*scale);
    int64_t at = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(i);
      const float* p = g.data<float>();
      for (int64_t k = 0; k < g.numel(); ++k) buffer_[at + k] = s * p[k];
      at += g.numel();
    }
    if (absl::Status st = comm->AllReduceSum(buffer_.data(), total); !st.ok()) return st;
    at = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& g = *ctx.input(i);
      Tensor& out = ctx.AllocateOutput(i, DataType::kFloat, g.dims());
      if (g.numel()) std::memcpy(out.data<float>(), buffer_.data() + at, g.numel() * sizeof(float));
      at += g.numel();
    }
    return absl::OkStatus();
  }

 private:
  std::vector<float> buffer_;  // the packed bucket, kept between steps
};

}  // namespace

void RegisterAllReduceKernels(KernelRegistry& r) {
  r.Add(grad::TandemDef("AllReduce", {DataType::kFloat}, Make<AllReduce>()));
}

}  // namespace tandem::cpu
