// ai.tandem MSELoss and MSELossGrad on the GPU (formulas in
// providers/cpu/kernels/nn/loss_grad_ops.cc), over the launchers of elementwise.cu and
// reduce.cu, so that a regression model's training step stays on the GPU whole.
#include <cmath>

#include "ops/loss_reduction.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

using Reduction = LossReduction;

// d = x - t into a fresh tensor of x's shape (output `out` >= 0, else scratch).
absl::StatusOr<Tensor> Difference(KernelContext& ctx, int out, const Tensor& x, const Tensor& t,
                                  cudaStream_t stream) {
  if (x.dims() != t.dims())
    return absl::InvalidArgumentError("target shape " + DimsToString(t.dims()) + " differs from input shape " +
                                      DimsToString(x.dims()));
  Tensor d;
  if (out >= 0) {
    auto y = Output(ctx, out, DataType::kFloat, x.dims());
    if (!y.ok()) return y.status();
    d = **y;
  } else {
    auto s = Scratch(ctx, DataType::kFloat, x.dims());
    if (!s.ok()) return s.status();
    d = std::move(*s);
  }
  TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kSub, x.data<float>(), t.data<float>(), d.data<float>(), x.numel(),
                                  nullptr, 0.f, stream));
  return d;
}

// Base of the two kernels: the provider's stream and the parsed reduction.
class MseKernel : public Kernel {
 protected:
  explicit MseKernel(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()), reduction_(ParseLossReduction(info.node)) {}
  // A valid reduction and float32 `inputs`.
  absl::Status Check(const KernelContext& ctx, std::initializer_list<int> inputs) const {
    if (!reduction_.ok()) return reduction_.status();
    return RequireFloat(ctx, inputs);
  }
  cudaStream_t stream_;
  absl::StatusOr<Reduction> reduction_;
};

// MSELoss(x, t): (x - t)^2 per element, then summed (double accumulation) or averaged.
class MseLoss : public MseKernel {
 public:
  explicit MseLoss(const KernelInfo& info) : MseKernel(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = Check(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    const bool none = *reduction_ == Reduction::kNone;
    auto d = Difference(ctx, none ? 0 : -1, x, *ctx.input(1), stream_);
    if (!d.ok()) return d.status();
    float* dv = d->data<float>();
    const int64_t n = x.numel();
    TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kMul, dv, dv, dv, n, nullptr, 0.f, stream_));
    if (none) return absl::OkStatus();
    auto y = Output(ctx, 0, DataType::kFloat, {});
    if (!y.ok()) return y.status();
    if (n == 0) {  // mean of nothing is NaN, sum 0 (as the CPU kernel)
      TANDEM_CUDA_RETURN(LaunchFill((*y)->data<float>(), 1, *reduction_ == Reduction::kMean ? NAN : 0.f, stream_));
      return absl::OkStatus();
    }
    ReduceGeometry all;  // x flattened to [n], reduced whole
    all.rank = 1;
    all.dims[0] = n;
    all.reduced[0] = true;
    const float scale = *reduction_ == Reduction::kMean ? 1.f / static_cast<float>(n) : 1.f;
    return EnqueueReduceSum(ctx, dv, (*y)->data<float>(), all, scale, stream_);
  }
};

// MSELossGrad(dY, x, t) -> (dX [, dT]): dX = 2 (x - t) dY' (dY' = dY per element, dY, or
// dY / n), dT = -dX.
class MseLossGrad : public MseKernel {
 public:
  explicit MseLossGrad(const KernelInfo& info) : MseKernel(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = Check(ctx, {0, 1, 2});
    if (!s.ok()) return s;
    if (!ctx.input(0)) return absl::UnimplementedError("MSELossGrad without dY");
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    const bool none = *reduction_ == Reduction::kNone;
    if (none ? dy.dims() != x.dims() : dy.numel() != 1)
      return absl::InvalidArgumentError("dY has shape " + DimsToString(dy.dims()) + ", expected " +
                                        (none ? DimsToString(x.dims()) : std::string("a scalar")));
    auto dx = Difference(ctx, 0, x, *ctx.input(2), stream_);
    if (!dx.ok()) return dx.status();
    const int64_t n = x.numel();
    float* g = dx->data<float>();
    const bool want_dt = ctx.num_outputs() > 1 && ctx.output_wanted(1);
    auto dt = want_dt ? Output(ctx, 1, DataType::kFloat, x.dims()) : absl::StatusOr<Tensor*>(nullptr);
    if (!dt.ok()) return dt.status();
    if (n == 0) return absl::OkStatus();
    StridedIndex scalar_dy;  // [n] times a broadcast scalar
    scalar_dy.rank = 1;
    scalar_dy.dims[0] = n;
    scalar_dy.stride_a[0] = 1;
    scalar_dy.stride_b[0] = 0;
    TANDEM_CUDA_RETURN(
        LaunchBinary(BinaryOp::kMul, g, dy.data<float>(), g, n, none ? nullptr : &scalar_dy, 0.f, stream_));
    const float two = *reduction_ == Reduction::kMean ? 2.f / static_cast<float>(n) : 2.f;
    TANDEM_CUDA_RETURN(LaunchUnary(UnaryOp::kScale, g, g, n, two, stream_));
    if (want_dt) TANDEM_CUDA_RETURN(LaunchUnary(UnaryOp::kNeg, g, (*dt)->data<float>(), n, 0.f, stream_));
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterLossKernels(KernelRegistry& r) {
  r.Add(FloatKernel("ai.tandem", "MSELoss", 1, kMaxOpset, Make<MseLoss>()));
  r.Add(FloatKernel("ai.tandem", "MSELossGrad", 1, kMaxOpset, Make<MseLossGrad>()));
}

}  // namespace tandem::cuda
