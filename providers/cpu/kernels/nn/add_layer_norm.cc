// ai.tandem AddLayerNormalization (ops/tandem_ops.cc; written by rewrites/add_layer_norm.cc):
// Y = LayerNormalization(A + B) over the last axis, and the sum itself as output 1 when it
// is wanted, one row at a time in cache (microkernels/add_layer_norm.h) instead of an Add's
// pass and the normalization's two.
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/add_layer_norm.h"

namespace tandem::cpu {
namespace {

class AddLayerNorm : public Kernel {
 public:
  explicit AddLayerNorm(const KernelInfo& info)
      : epsilon_(info.node.attr_float("epsilon", 1e-5f)), kernels_(add_layer_norm::Builds().best()) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor &a = *ctx.input(0), &b = *ctx.input(1), &gamma = *ctx.input(2);
    const Tensor* beta = ctx.input(3);
    for (const Tensor* t : {&a, &b, &gamma, beta})
      if (t && t->dtype() != DataType::kFloat)
        return absl::InvalidArgumentError("A, B, Scale and Bias must be float32");
    if (a.dims() != b.dims() || a.rank() < 1)  // the rewrite fuses Adds of one static shape
      return absl::InvalidArgumentError("A " + DimsToString(a.dims()) + " and B " + DimsToString(b.dims()) +
                                        " must have one shape of rank 1 or more");
    const int64_t n = a.dim(-1);
    if (gamma.numel() != n || (beta && beta->numel() != n))
      return absl::InvalidArgumentError("Scale " + DimsToString(gamma.dims()) + " and bias must hold the last dim's " +
                                        std::to_string(n) + " values");
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, a.dims());
    Tensor* sum = ctx.output_wanted(1) ? &ctx.AllocateOutput(1, DataType::kFloat, a.dims()) : nullptr;
    if (a.numel() == 0) return absl::OkStatus();
    const float *pa = a.data<float>(), *pb = b.data<float>(), *pg = gamma.data<float>();
    const float* pbeta = beta ? beta->data<float>() : nullptr;
    float *py = y.data<float>(), *ps = sum ? sum->data<float>() : nullptr;
    ParallelBlocks(a.numel() / n, [&](int64_t r0, int64_t r1) {
      kernels_.rows(pa + r0 * n, pb + r0 * n, pg, pbeta, epsilon_, n, r1 - r0, py + r0 * n, ps ? ps + r0 * n : nullptr);
    }, n);
    return absl::OkStatus();
  }

 private:
  float epsilon_;
  const add_layer_norm::Kernels& kernels_;
};

}  // namespace

void RegisterAddLayerNormKernels(KernelRegistry& r) {
  r.Add(TandemKernel("AddLayerNormalization", {DataType::kFloat},
                     [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
                       return std::unique_ptr<Kernel>(new AddLayerNorm(info));
                     }));
}

}  // namespace tandem::cpu
