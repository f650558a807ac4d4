// Pad (all opsets, modes constant / reflect / edge / wrap) on the GPU, float32 data, with
// the CPU's geometry (ops/pad_geometry.h). pads, constant_value and axes are host
// inputs (opset 11+). A constant-mode Pad is also the gradient of one (negated pads).
#include "ops/pad_geometry.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

class PadKernel : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()),
        opset_(info.opset),
        attr_pads_(info.node.attr_ints(info.opset < 2 ? "paddings" : "pads")),
        value_(info.node.attr_float("value", 0.f)),
        mode_name_(info.node.attr_string("mode", "constant")),
        mode_(ParsePadMode(mode_name_, info.opset)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    if (!mode_) return absl::InvalidArgumentError("unsupported mode '" + mode_name_ + "'");
    const Tensor& x = *ctx.input(0);
    std::vector<int64_t> pads = attr_pads_, axes;
    float value = value_;
    if (opset_ >= 11) {
      auto p = HostInts(ctx.input(1), "pads");
      if (!p.ok()) return p.status();
      pads = *p;
      if (const Tensor* v = ctx.input(2); v && v->numel() > 0) {
        if (v->numel() != 1 || v->dtype() != DataType::kFloat)
          return absl::InvalidArgumentError("constant_value must be one float32 value");
        value = v->data<float>()[0];
      }
      if (opset_ >= 18 && ctx.input(3)) {
        auto a = HostInts(ctx.input(3), "axes");
        if (!a.ok()) return a.status();
        axes = *a;
      }
    }
    auto amounts = ResolvePadAmounts(x.dims(), pads, axes);
    if (!amounts.ok()) return amounts.status();
    auto out = PaddedDims(x.dims(), *amounts, *mode_, mode_name_, pads);
    if (!out.ok()) return out.status();
    if (out->size() > static_cast<size_t>(kMaxRank))
      return absl::UnimplementedError("Pad of rank " + std::to_string(out->size()));
    PadIndex ix;
    ix.rank = static_cast<int>(out->size());
    for (int d = 0; d < ix.rank; ++d) {
      ix.out[d] = (*out)[d];
      ix.in[d] = x.dim(d);
      ix.before[d] = amounts->before[d];
    }
    ix.mode = static_cast<int>(*mode_);
    ix.value = value;
    auto y = Output(ctx, 0, DataType::kFloat, *out);
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchPad(x.data<float>(), (*y)->data<float>(), (*y)->numel(), ix, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  int opset_;
  std::vector<int64_t> attr_pads_;
  float value_;
  std::string mode_name_;
  std::optional<PadMode> mode_;
};

}  // namespace

void RegisterPadKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "Pad", 1, 10, Make<PadKernel>()));
  KernelDef pad = FloatKernel("", "Pad", 11, kMaxOpset, Make<PadKernel>());
  pad.host_inputs = {1, 2, 3};  // pads, constant_value, axes
  r.Add(std::move(pad));
}

}  // namespace tandem::cuda
