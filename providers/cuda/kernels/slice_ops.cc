// Slice (all opsets) and its gradient SliceGrad on the GPU, float32 data: the selected
// elements as a strided view of x (ops/slice_geometry.h, the CPU's geometry), copied
// out by a strided copy, or written back into a zeroed dX by a strided scatter. Starts,
// ends, axes, steps and SliceGrad's shape of X are host inputs.
#include "ops/slice_geometry.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

// The view's output dims and strides as a StridedIndex (operand a).
absl::StatusOr<StridedIndex> ViewIndex(const SliceView& v) {
  if (v.out.size() > static_cast<size_t>(kMaxRank))
    return absl::UnimplementedError("Slice of rank " + std::to_string(v.out.size()) + " (CUDA kernels take up to " +
                                    std::to_string(kMaxRank) + ")");
  StridedIndex ix;
  ix.rank = static_cast<int>(v.out.size());
  for (int d = 0; d < ix.rank; ++d) {
    ix.dims[d] = v.out[d];
    ix.stride_a[d] = v.strides[d];
  }
  return ix;
}

// Optional host integer input i, empty when absent.
absl::StatusOr<std::vector<int64_t>> OptionalInts(const KernelContext& ctx, int i, const char* what) {
  if (!ctx.input(i)) return std::vector<int64_t>{};
  return HostInts(ctx.input(i), what);
}

class SliceKernel : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()),
        opset_(info.opset),
        starts_(info.node.attr_ints("starts")),
        ends_(info.node.attr_ints("ends")),
        axes_(info.node.attr_ints("axes")) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (opset_ >= 10) {
      auto st = HostInts(ctx.input(1), "starts");
      auto en = HostInts(ctx.input(2), "ends");
      auto ax = OptionalInts(ctx, 3, "axes");
      auto sp = OptionalInts(ctx, 4, "steps");
      for (const auto* r : {&st, &en, &ax, &sp})
        if (!r->ok()) return r->status();
      if (ctx.input(3) && ax->size() != st->size())
        return absl::InvalidArgumentError("starts, ends, axes and steps must have the same length");
      starts = *st, ends = *en, axes = *ax, steps = *sp;
    }
    auto view = ResolveSlice(x.dims(), starts, ends, axes, steps);
    if (!view.ok()) return view.status();
    auto ix = ViewIndex(*view);
    if (!ix.ok()) return ix.status();
    auto y = Output(ctx, 0, DataType::kFloat, view->out);
    if (!y.ok()) return y.status();
    if ((*y)->numel() == 0) return absl::OkStatus();
    TANDEM_CUDA_RETURN(LaunchStridedCopy(x.data<float>() + view->base, (*y)->data<float>(), (*y)->numel(), *ix, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  int opset_;
  std::vector<int64_t> starts_, ends_, axes_;
};

// ai.tandem SliceGrad(dY, shape of X, starts, ends[, axes, steps]) -> dX.
class SliceGradKernel : public Kernel {
 public:
  explicit SliceGradKernel(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    auto xd = HostInts(ctx.input(1), "shape of X");
    auto st = HostInts(ctx.input(2), "starts");
    auto en = HostInts(ctx.input(3), "ends");
    auto ax = OptionalInts(ctx, 4, "axes");
    auto sp = OptionalInts(ctx, 5, "steps");
    for (const auto* r : {&xd, &st, &en, &ax, &sp})
      if (!r->ok()) return r->status();
    auto view = ResolveSlice(*xd, *st, *en, *ax, *sp);  // the forward Slice's
    if (!view.ok()) return view.status();
    if (view->out != dy.dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " does not match the slice " +
                                        DimsToString(view->out) + " of " + DimsToString(*xd));
    auto ix = ViewIndex(*view);
    if (!ix.ok()) return ix.status();
    auto dx = Output(ctx, 0, DataType::kFloat, *xd);
    if (!dx.ok()) return dx.status();
    TANDEM_CUDA_RETURN(LaunchFill((*dx)->data<float>(), (*dx)->numel(), 0.f, stream_));
    if (dy.numel() == 0) return absl::OkStatus();
    TANDEM_CUDA_RETURN(LaunchStridedScatter(dy.data<float>(), (*dx)->data<float>() + view->base, dy.numel(), *ix,
                                            stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

}  // namespace

void RegisterSliceKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "Slice", 1, 9, Make<SliceKernel>()));
  KernelDef slice = FloatKernel("", "Slice", 10, kMaxOpset, Make<SliceKernel>());
  slice.host_inputs = {1, 2, 3, 4};
  r.Add(std::move(slice));
  KernelDef grad = FloatKernel("ai.tandem", "SliceGrad", 1, kMaxOpset, Make<SliceGradKernel>());
  grad.host_inputs = {1, 2, 3, 4, 5};
  r.Add(std::move(grad));
}

}  // namespace tandem::cuda
