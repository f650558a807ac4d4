// ReduceSum/ReduceMean, SumToShape and MeanScale on the GPU (reduce.cu).
#include <algorithm>
#include <cmath>
#include <optional>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {

absl::Status EnqueueReduceSum(KernelContext& ctx, const float* x, float* y, const ReduceGeometry& g, float scale,
                              cudaStream_t stream) {
  const size_t bytes = ReduceScratchBytes(g);
  std::optional<Tensor> scratch;
  if (bytes) {
    auto t = Scratch(ctx, DataType::kDouble, {static_cast<int64_t>(bytes / sizeof(double))});
    if (!t.ok()) return t.status();
    scratch = std::move(*t);
  }
  TANDEM_CUDA_RETURN(LaunchReduceSum(x, y, g, scale, scratch ? scratch->data<double>() : nullptr, stream));
  return absl::OkStatus();
}

namespace {

// Allocates output 0 and enqueues the reduction; returns the output.
absl::StatusOr<Tensor*> LaunchReduce(KernelContext& ctx, cudaStream_t stream, const Tensor& x,
                                     const std::vector<bool>& reduced, bool keepdims, bool mean) {
  if (x.rank() > kMaxRank) return absl::UnimplementedError("rank above 8");
  ReduceGeometry g;
  g.rank = x.rank();
  Dims out;
  int64_t count = 1;
  for (int d = 0; d < x.rank(); ++d) {
    g.dims[d] = x.dim(d);
    g.reduced[d] = reduced[d];
    if (reduced[d]) count *= x.dim(d);
    if (!reduced[d]) out.push_back(x.dim(d));
    else if (keepdims) out.push_back(1);
  }
  auto y = Output(ctx, 0, DataType::kFloat, out);
  if (!y.ok()) return y.status();
  const float scale = mean ? (count ? 1.f / static_cast<float>(count) : 0.f) : 1.f;
  if (count == 0) {  // an empty reduction: sum 0, mean NaN (as numpy)
    TANDEM_CUDA_RETURN(LaunchFill((*y)->data<float>(), (*y)->numel(), mean ? NAN : 0.f, stream));
    return *y;
  }
  absl::Status s = EnqueueReduceSum(ctx, x.data<float>(), (*y)->data<float>(), g, scale, stream);
  if (!s.ok()) return s;
  return *y;
}

// ReduceSum (axes attribute before opset 13, input from 13) and ReduceMean (input from 18).
class Reduce : public Kernel {
 public:
  Reduce(const KernelInfo& info, bool mean)
      : stream_(ProviderOf(info).stream()),
        mean_(mean),
        axes_input_(info.opset >= (mean ? 18 : 13)),
        keepdims_(info.node.attr_int("keepdims", 1) != 0),
        noop_(info.node.attr_int("noop_with_empty_axes", 0) != 0),
        attr_axes_(info.node.attr_ints("axes")) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    std::vector<int64_t> axes = attr_axes_;
    if (axes_input_ && ctx.input(1)) {
      auto a = HostInts(ctx.input(1), "axes");
      if (!a.ok()) return a.status();
      axes = *a;
    }
    if (axes.empty() && noop_ && axes_input_) {
      ctx.SetOutput(0, x);
      return absl::OkStatus();
    }
    std::vector<bool> reduced(x.rank(), axes.empty());
    for (int64_t a : axes) {
      if (a < -x.rank() || a >= x.rank())
        return absl::InvalidArgumentError("axis " + std::to_string(a) + " is out of range for rank " +
                                          std::to_string(x.rank()));
      reduced[a < 0 ? a + x.rank() : a] = true;
    }
    auto y = LaunchReduce(ctx, stream_, x, reduced, keepdims_, mean_);
    return y.status();
  }

 private:
  cudaStream_t stream_;
  bool mean_, axes_input_, keepdims_, noop_;
  std::vector<int64_t> attr_axes_;
};

template <bool kMean>
class ReduceOf : public Reduce {
 public:
  explicit ReduceOf(const KernelInfo& info) : Reduce(info, kMean) {}
};

// SumToShape(dY, like): dY summed over the dims broadcast to reach it from like's shape.
class SumToShape : public Kernel {
 public:
  explicit SumToShape(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    if (!ctx.input(1)) return absl::InvalidArgumentError("missing input 1 (like)");
    const Dims& like = ctx.input(1)->dims();
    if (like.size() > dy.dims().size())
      return absl::InvalidArgumentError("cannot sum " + DimsToString(dy.dims()) + " to " + DimsToString(like));
    if (NumElements(like) == dy.numel()) {  // only 1-sized dims differ: nothing to sum
      ctx.SetOutput(0, dy.Reshaped(like));
      return absl::OkStatus();
    }
    const size_t shift = dy.dims().size() - like.size();
    std::vector<bool> reduced(dy.rank());
    for (size_t d = 0; d < dy.dims().size(); ++d)
      reduced[d] = d < shift || (like[d - shift] == 1 && dy.dims()[d] != 1);
    auto y = LaunchReduce(ctx, stream_, dy, reduced, false, false);
    if (!y.ok()) return y.status();
    // The reduction dropped every summed dim; the result takes like's exact shape.
    Tensor summed = (*y)->Reshaped(like);
    ctx.SetOutput(0, std::move(summed));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

// MeanScale(g, X, Y) = g * size(Y) / size(X) (X and Y are read for their sizes only).
class MeanScale : public Kernel {
 public:
  explicit MeanScale(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    if (!ctx.input(1) || !ctx.input(2)) return absl::InvalidArgumentError("expects (g, X, Y)");
    const Tensor& g = *ctx.input(0);
    const int64_t nx = ctx.input(1)->numel(), ny = ctx.input(2)->numel();
    const float f = nx ? static_cast<float>(static_cast<double>(ny) / static_cast<double>(nx)) : 0.f;
    auto y = Output(ctx, 0, DataType::kFloat, g.dims());
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchUnary(UnaryOp::kScale, g.data<float>(), (*y)->data<float>(), g.numel(), f, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  KernelDef sum_attr = FloatKernel("", "ReduceSum", 1, 12, Make<ReduceOf<false>>());
  KernelDef sum_input = FloatKernel("", "ReduceSum", 13, kMaxOpset, Make<ReduceOf<false>>());
  sum_input.host_inputs = {1};
  KernelDef mean_attr = FloatKernel("", "ReduceMean", 1, 17, Make<ReduceOf<true>>());
  KernelDef mean_input = FloatKernel("", "ReduceMean", 18, kMaxOpset, Make<ReduceOf<true>>());
  mean_input.host_inputs = {1};
  for (KernelDef* d : {&sum_attr, &sum_input, &mean_attr, &mean_input}) r.Add(std::move(*d));
  KernelDef to_shape = FloatKernel("ai.tandem", "SumToShape", 1, kMaxOpset, Make<SumToShape>());
  to_shape.metadata_inputs = {1};
  r.Add(std::move(to_shape));
  KernelDef mean_scale = FloatKernel("ai.tandem", "MeanScale", 1, kMaxOpset, Make<MeanScale>());
  mean_scale.metadata_inputs = {1, 2};
  r.Add(std::move(mean_scale));
}

}  // namespace tandem::cuda
