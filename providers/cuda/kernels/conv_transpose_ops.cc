// ConvTranspose (all opsets) on cuDNN, float32: the backward-data pass of the convolution
// that maps the output back onto the input (same weight [C_in, C_out/group, kernel...],
// window and groups), over conv_plan.h's plans; the bias one launch after. What cuDNN's
// descriptor cannot say (asymmetric or negative padding, an output_padding the equivalent
// convolution does not reproduce, > 3 spatial dims) is declined at placement.
#include <string>
#include <vector>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/cudnn_shapes.h"
#include "providers/cuda/kernels/conv_plan.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

// The convolution whose data gradient is this ConvTranspose of X [N, C_in, in...] by
// W [C_in, C_out/group, kernel...] (its input is the transposed output, `y`, in the
// model's rank). Unimplemented for what cuDNN cannot do.
struct EquivalentConv {
  CudnnConvShape shape;
  Dims y;
};
absl::StatusOr<EquivalentConv> EquivalentConvShape(const Node& node, const Dims& x, const Dims& w) {
  if (x.size() < 3 || w.size() != x.size())
    return absl::InvalidArgumentError("ConvTranspose needs X [N, C, spatial...] and W of its rank, got X " +
                                      DimsToString(x) + ", W " + DimsToString(w));
  const int64_t group = node.attr_int("group", 1);
  if (group < 1 || x[1] != w[0])
    return absl::InvalidArgumentError("X has " + std::to_string(x[1]) + " channels, W " + DimsToString(w) +
                                      " expects " + std::to_string(w[0]));
  const Dims in(x.begin() + 2, x.end());
  auto g = ComputeTransposedWindowGeometry(node, in, std::vector<int64_t>(w.begin() + 2, w.end()));
  if (!g.ok()) return g.status();
  Dims out = {x[0], w[1] * group};
  for (size_t i = 0; i < in.size(); ++i) {
    if (g->pads_begin[i] < 0 || g->pads_end[i] < 0)
      return absl::UnimplementedError("negative padding (an output_shape past the natural size)");
    const int64_t eff = (g->kernel[i] - 1) * g->dilations[i] + 1;
    const int64_t back = (g->out[i] + g->pads_begin[i] + g->pads_end[i] - eff) / g->strides[i] + 1;
    if (g->out[i] + g->pads_begin[i] + g->pads_end[i] < eff || back != in[i])
      return absl::UnimplementedError("an output size the equivalent convolution does not map back onto the input");
    out.push_back(g->out[i]);
  }
  WindowGeometry conv = *g;
  conv.out = in;  // the convolution of the transposed output comes back to X's size
  auto shape = CudnnConvShapeOf(out, w, conv, group);
  if (!shape.ok()) return shape.status();
  return EquivalentConv{std::move(*shape), std::move(out)};
}

class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)), node_(info.node), plans_(ProviderOf(info).tf32()) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input(2);
    auto conv = EquivalentConvShape(node_, x.dims(), w.dims());
    if (!conv.ok()) return conv.status();
    if (b && (b->dtype() != DataType::kFloat || b->numel() != conv->y[1]))
      return absl::InvalidArgumentError("ConvTranspose bias must hold one float per output channel");
    auto y = Output(ctx, 0, DataType::kFloat, conv->y);
    if (!y.ok()) return y.status();
    if ((*y)->numel() == 0) return absl::OkStatus();
    if (x.numel() == 0 || w.numel() == 0) {
      TANDEM_CUDA_RETURN(LaunchFill((*y)->data<float>(), (*y)->numel(), 0.f, prov_.stream()));
    } else {
      auto plan = plans_.For(conv->shape);
      if (!plan.ok()) return plan.status();
      s = (*plan)->BackwardData(prov_, w.data<float>(), x.data<float>(), (*y)->data<float>());
      if (!s.ok()) return s;
    }
    return b ? AddChannelBias(b->data<float>(), **y, prov_.stream()) : absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  const Node node_;  // the attributes the geometry reads
  ConvPlanCache plans_;
};

}  // namespace

bool ConvTransposeAccepts(const KernelInfo& info) {
  if (info.input_shapes.size() < 2) return false;
  const Shape& xs = info.input_shapes[0];
  const Shape& ws = info.input_shapes[1];
  if (!xs.rank_known || !xs.fully_known() || !ws.rank_known || !ws.fully_known()) return false;  // cannot tell yet
  return EquivalentConvShape(info.node, xs.ToDims(), ws.ToDims()).ok();
}

void RegisterConvTransposeKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "ConvTranspose", 1, kMaxOpset, Make<ConvTransposeKernel>()));
}

}  // namespace tandem::cuda
