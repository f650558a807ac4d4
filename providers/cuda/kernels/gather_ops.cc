// Gather (all opsets, attribute axis) on the GPU, float32 data, and its gradient
// GatherGrad: an embedding lookup and its update stay on the device with the table.
// Indices are a device input of int64 or int32 (a non-float data input, accepts.cc).
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

class GatherKernel : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info) : prov_(ProviderOf(info)), axis_(info.node.attr_int("axis", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (!indices || (indices->dtype() != DataType::kInt64 && indices->dtype() != DataType::kInt32))
      return absl::InvalidArgumentError("Gather indices must be int64 or int32");
    const int64_t rank = x.rank();
    if (rank == 0 || axis_ < -rank || axis_ >= rank)
      return absl::InvalidArgumentError("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
    Dims out(x.dims().begin(), x.dims().begin() + axis);
    out.insert(out.end(), indices->dims().begin(), indices->dims().end());
    out.insert(out.end(), x.dims().begin() + axis + 1, x.dims().end());
    int64_t inner = 1;
    for (int d = axis + 1; d < rank; ++d) inner *= x.dim(d);
    auto y = Output(ctx, 0, DataType::kFloat, out);
    if (!y.ok()) return y.status();
    if ((*y)->numel() == 0) return absl::OkStatus();
    TANDEM_CUDA_RETURN(LaunchGather(x.data<float>(), indices->raw(), indices->dtype() == DataType::kInt64,
                                    (*y)->data<float>(), (*y)->numel(), indices->numel(), x.dim(axis), inner,
                                    prov_.stream()));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  int64_t axis_;
};

// ai.tandem GatherGrad(dY, shape of X, indices) -> dX, attribute axis.
class GatherGradKernel : public Kernel {
 public:
  explicit GatherGradKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)), axis_(info.node.attr_int("axis", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    auto xd = HostInts(ctx.input(1), "shape of X");
    if (!xd.ok()) return xd.status();
    const Tensor* indices = ctx.input(2);
    if (!indices || (indices->dtype() != DataType::kInt64 && indices->dtype() != DataType::kInt32))
      return absl::InvalidArgumentError("GatherGrad indices must be int64 or int32");
    const int64_t rank = static_cast<int64_t>(xd->size());
    if (rank == 0 || axis_ < -rank || axis_ >= rank)
      return absl::InvalidArgumentError("axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + rank : axis_);
    Dims expect(xd->begin(), xd->begin() + axis);
    expect.insert(expect.end(), indices->dims().begin(), indices->dims().end());
    expect.insert(expect.end(), xd->begin() + axis + 1, xd->end());
    if (expect != dy.dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " does not match Gather output " +
                                        DimsToString(expect));
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= (*xd)[d];
    auto dx = Output(ctx, 0, DataType::kFloat, *xd);
    if (!dx.ok()) return dx.status();
    TANDEM_CUDA_RETURN(LaunchGatherGrad(dy.data<float>(), indices->raw(), indices->dtype() == DataType::kInt64,
                                        (*dx)->data<float>(), (*dx)->numel(), dy.numel(), indices->numel(),
                                        (*xd)[axis], inner, prov_.stream()));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  int64_t axis_;
};

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "Gather", 1, kMaxOpset, Make<GatherKernel>()));
  KernelDef grad = FloatKernel("ai.tandem", "GatherGrad", 1, kMaxOpset, Make<GatherGradKernel>());
  grad.host_inputs = {1};  // the shape of X
  r.Add(std::move(grad));
}

}  // namespace tandem::cuda
