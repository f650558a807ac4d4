// LayerNormalization (opset 17, and ai.tandem's for older graphs, optimizer/
// layer_norm_fusion.h) and ai.tandem LayerNormalizationGrad on the GPU, float32, over the
// kernels of layer_norm.cu. Scale and B broadcast to the normalized dims X[axis:] as the
// CPU's; Mean and InvStdDev come out float32 (accepts.cc declines other stash types).
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

struct Rows {
  Dims inner_dims;
  int64_t outer = 1, inner = 1;
};

absl::StatusOr<Rows> SplitAt(const Dims& x, int64_t axis_attr) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (axis_attr < -rank || axis_attr >= rank)
    return absl::InvalidArgumentError("axis " + std::to_string(axis_attr) + " is out of range for rank " +
                                      std::to_string(rank));
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  Rows r;
  r.inner_dims.assign(x.begin() + axis, x.end());
  r.outer = NumElements(Dims(x.begin(), x.begin() + axis));
  r.inner = NumElements(r.inner_dims);
  return r;
}

// `t` as `inner_dims` values on the device: itself when it has them all, else expanded
// into scratch; null stays null.
absl::StatusOr<const float*> Expanded(KernelContext& ctx, const Tensor* t, const Dims& inner_dims,
                                      const char* what, cudaStream_t stream, std::vector<Tensor>& keep) {
  if (!t) return static_cast<const float*>(nullptr);
  auto ix = BroadcastTo(t->dims(), inner_dims);
  if (!ix.ok() || t->dims().size() > inner_dims.size())
    return absl::InvalidArgumentError(std::string(what) + " of shape " + DimsToString(t->dims()) +
                                      " cannot be broadcast to " + DimsToString(inner_dims));
  if (t->numel() == NumElements(inner_dims)) return t->data<float>();
  auto full = Scratch(ctx, DataType::kFloat, inner_dims);
  if (!full.ok()) return full.status();
  TANDEM_CUDA_RETURN(LaunchStridedCopy(t->data<float>(), full->data<float>(), full->numel(), *ix, stream));
  keep.push_back(*full);
  return keep.back().data<float>();
}

// The attributes both kernels read.
class LayerNormBase : public Kernel {
 public:
  explicit LayerNormBase(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()),
        axis_(info.node.attr_int("axis", -1)),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)) {}

 protected:
  cudaStream_t stream_;
  int64_t axis_;
  float epsilon_;
};

class LayerNormKernel : public LayerNormBase {
 public:
  using LayerNormBase::LayerNormBase;

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, ctx.input(2) ? std::initializer_list<int>{0, 1, 2} : std::initializer_list<int>{0, 1});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    auto rows = SplitAt(x.dims(), axis_);
    if (!rows.ok()) return rows.status();
    std::vector<Tensor> keep;
    auto scale = Expanded(ctx, ctx.input(1), rows->inner_dims, "Scale", stream_, keep);
    if (!scale.ok()) return scale.status();
    auto bias = Expanded(ctx, ctx.input(2), rows->inner_dims, "B", stream_, keep);
    if (!bias.ok()) return bias.status();
    auto y = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!y.ok()) return y.status();
    Dims stat_dims(x.dims().begin(), x.dims().end() - rows->inner_dims.size());
    stat_dims.resize(x.dims().size(), 1);
    float* stat[2] = {nullptr, nullptr};
    for (int i = 0; i < 2; ++i) {
      if (!ctx.output_wanted(1 + i)) continue;
      auto t = Output(ctx, 1 + i, DataType::kFloat, stat_dims);
      if (!t.ok()) return t.status();
      stat[i] = (*t)->data<float>();
    }
    TANDEM_CUDA_RETURN(LaunchLayerNorm(x.data<float>(), *scale, *bias, (*y)->data<float>(), stat[0], stat[1],
                                       rows->outer, rows->inner, epsilon_, stream_));
    return absl::OkStatus();
  }
};

// LayerNormalizationGrad(dY, X, Scale) -> dX, dScale, dB (the last two of X[axis:]'s shape).
class LayerNormGradKernel : public LayerNormBase {
 public:
  using LayerNormBase::LayerNormBase;

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1, 2});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    if (s = RequireSameShape(dy, x); !s.ok()) return s;
    auto rows = SplitAt(x.dims(), axis_);
    if (!rows.ok()) return rows.status();
    std::vector<Tensor> keep;
    auto scale = Expanded(ctx, ctx.input(2), rows->inner_dims, "Scale", stream_, keep);
    if (!scale.ok()) return scale.status();
    float* out[3] = {nullptr, nullptr, nullptr};
    for (int i = 0; i < 3; ++i) {
      if (!ctx.output_wanted(i)) continue;
      auto t = Output(ctx, i, DataType::kFloat, i == 0 ? x.dims() : rows->inner_dims);
      if (!t.ok()) return t.status();
      out[i] = (*t)->data<float>();
      if (i > 0 && rows->outer == 0) TANDEM_CUDA_RETURN(LaunchFill(out[i], (*t)->numel(), 0.f, stream_));
    }
    if (rows->outer == 0 || rows->inner == 0) return absl::OkStatus();
    auto stats = Scratch(ctx, DataType::kFloat, {2, rows->outer});
    if (!stats.ok()) return stats.status();
    auto partial = Scratch(ctx, DataType::kDouble, {LayerNormGradScratchDoubles(rows->outer, rows->inner)});
    if (!partial.ok()) return partial.status();
    float* mean = stats->data<float>();
    TANDEM_CUDA_RETURN(LaunchLayerNormGrad(dy.data<float>(), x.data<float>(), *scale, out[0], out[1], out[2], mean,
                                           mean + rows->outer, partial->data<double>(), rows->outer, rows->inner,
                                           epsilon_, stream_));
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterLayerNormKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "LayerNormalization", 17, kMaxOpset, Make<LayerNormKernel>()));
  r.Add(FloatKernel("ai.tandem", "LayerNormalization", 1, kMaxOpset, Make<LayerNormKernel>()));
  r.Add(FloatKernel("ai.tandem", "LayerNormalizationGrad", 1, kMaxOpset, Make<LayerNormGradKernel>()));
}

}  // namespace tandem::cuda
