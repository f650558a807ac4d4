// Activations, broadcasting arithmetic and the activation gradients (ai.tandem) on the
// GPU, over the launchers of elementwise.cu.
#include <limits>
#include <utility>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

class Unary : public Kernel {
 public:
  Unary(const KernelInfo& info, UnaryOp op, float default_alpha, float default_beta)
      : stream_(ProviderOf(info).stream()),
        op_(op),
        alpha_(info.node.attr_float("alpha", default_alpha)),
        beta_(info.node.attr_float("beta", default_beta)) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    auto y = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchUnary(op_, x.data<float>(), (*y)->data<float>(), x.numel(), alpha_, stream_, beta_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  UnaryOp op_;
  float alpha_, beta_;
};

// kAlphaMilli / kBetaMilli: the defaults of attributes alpha / beta, in thousandths.
template <UnaryOp kOp, int kAlphaMilli = 0, int kBetaMilli = 0>
class UnaryOf : public Unary {
 public:
  explicit UnaryOf(const KernelInfo& info) : Unary(info, kOp, kAlphaMilli / 1000.f, kBetaMilli / 1000.f) {}
};

// The bounds of Clip / ClipGrad: attributes min/max before opset 11, optional host
// scalar inputs (at `first`, `first` + 1) from 11; absent ones are `absent` (as the CPU
// kernels: float's extremes for Clip, infinities for ClipGrad).
absl::StatusOr<std::pair<float, float>> ClipBounds(const KernelContext& ctx, int first, bool from_inputs,
                                                   float attr_min, float attr_max, float absent) {
  if (!from_inputs) return std::make_pair(attr_min, attr_max);
  float bound[2] = {-absent, absent};
  for (int i = 0; i < 2; ++i) {
    const Tensor* b = ctx.input(first + i);
    if (!b) continue;
    if (b->numel() != 1 || b->dtype() != DataType::kFloat)
      return absl::InvalidArgumentError(std::string(i == 0 ? "min" : "max") + " must be a single float32 value, got " +
                                        DataTypeName(b->dtype()) + DimsToString(b->dims()));
    bound[i] = b->data<float>()[0];
  }
  return std::make_pair(bound[0], bound[1]);
}

class Clip : public Kernel {
 public:
  explicit Clip(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()),
        from_inputs_(info.opset >= 11),
        min_(info.node.attr_float("min", std::numeric_limits<float>::lowest())),
        max_(info.node.attr_float("max", std::numeric_limits<float>::max())) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    auto bounds = ClipBounds(ctx, 1, from_inputs_, min_, max_, std::numeric_limits<float>::max());
    if (!bounds.ok()) return bounds.status();
    const Tensor& x = *ctx.input(0);
    auto y = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchUnary(UnaryOp::kClip, x.data<float>(), (*y)->data<float>(), x.numel(), bounds->first,
                                   stream_, bounds->second));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  bool from_inputs_;
  float min_, max_;
};

// ai.tandem ClipGrad(dY, X[, min, max]) -> dX. The bounds' own gradients (outputs 1, 2)
// stay on the CPU (accepts.cc).
class ClipGrad : public Kernel {
 public:
  explicit ClipGrad(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()),
        min_(info.node.attr_float("min", -std::numeric_limits<float>::infinity())),
        max_(info.node.attr_float("max", std::numeric_limits<float>::infinity())),
        from_inputs_(!info.node.has_attr("min") && !info.node.has_attr("max")) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    if (s = RequireSameShape(dy, x); !s.ok()) return s;
    auto bounds = ClipBounds(ctx, 2, from_inputs_, min_, max_, std::numeric_limits<float>::infinity());
    if (!bounds.ok()) return bounds.status();
    auto dx = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!dx.ok()) return dx.status();
    TANDEM_CUDA_RETURN(LaunchClipGrad(dy.data<float>(), x.data<float>(), (*dx)->data<float>(), x.numel(),
                                      bounds->first, bounds->second, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  float min_, max_;
  bool from_inputs_;
};

// Binary ops with numpy broadcasting; also the (dY, saved) gradient ops.
class Binary : public Kernel {
 public:
  Binary(const KernelInfo& info, BinaryOp op)
      : stream_(ProviderOf(info).stream()), op_(op), alpha_(info.node.attr_float("alpha", 0.01f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    if (a.dims() == b.dims()) {
      auto y = Output(ctx, 0, DataType::kFloat, a.dims());
      if (!y.ok()) return y.status();
      TANDEM_CUDA_RETURN(LaunchBinary(op_, a.data<float>(), b.data<float>(), (*y)->data<float>(),
                                      a.numel(), nullptr, alpha_, stream_));
      return absl::OkStatus();
    }
    auto ix = Broadcast(a.dims(), b.dims());
    if (!ix.ok()) return ix.status();
    Dims out(ix->dims, ix->dims + ix->rank);
    auto y = Output(ctx, 0, DataType::kFloat, out);
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchBinary(op_, a.data<float>(), b.data<float>(), (*y)->data<float>(),
                                    (*y)->numel(), &*ix, alpha_, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  BinaryOp op_;
  float alpha_;
};

template <BinaryOp kOp>
class BinaryOf : public Binary {
 public:
  explicit BinaryOf(const KernelInfo& info) : Binary(info, kOp) {}
};

// Sum(x_1..x_n) with broadcasting: folded pairwise.
class Sum : public Kernel {
 public:
  explicit Sum(const KernelInfo& info) : stream_(ProviderOf(info).stream()) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (ctx.num_inputs() < 1) return absl::InvalidArgumentError("expects at least one input");
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      absl::Status s = RequireFloat(ctx, {i});
      if (!s.ok()) return s;
    }
    Tensor acc = *ctx.input(0);
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor& b = *ctx.input(i);
      auto ix = Broadcast(acc.dims(), b.dims());
      if (!ix.ok()) return ix.status();
      Dims out(ix->dims, ix->dims + ix->rank);
      auto next = Scratch(ctx, DataType::kFloat, out);
      if (!next.ok()) return next.status();
      TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kAdd, acc.data<float>(), b.data<float>(),
                                      next->data<float>(), next->numel(), &*ix, 0.f, stream_));
      acc = std::move(*next);
    }
    ctx.SetOutput(0, acc);
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
};

// ScalarLike(like): a scalar holding attribute `value` (like's data is not read).
class ScalarLike : public Kernel {
 public:
  explicit ScalarLike(const KernelInfo& info)
      : stream_(ProviderOf(info).stream()), value_(info.node.attr_float("value", 0.f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0});
    if (!s.ok()) return s;
    auto y = Output(ctx, 0, DataType::kFloat, {});
    if (!y.ok()) return y.status();
    TANDEM_CUDA_RETURN(LaunchFill((*y)->data<float>(), 1, value_, stream_));
    return absl::OkStatus();
  }

 private:
  cudaStream_t stream_;
  float value_;
};

}  // namespace

void RegisterElementwiseKernels(KernelRegistry& r) {
  const std::string onnx, tandem = "ai.tandem";
  r.Add(FloatKernel(onnx, "Relu", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kRelu>>()));
  r.Add(FloatKernel(onnx, "Tanh", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kTanh>>()));
  r.Add(FloatKernel(onnx, "Sigmoid", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kSigmoid>>()));
  r.Add(FloatKernel(onnx, "Exp", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kExp>>()));
  r.Add(FloatKernel(onnx, "Log", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kLog>>()));
  r.Add(FloatKernel(onnx, "Neg", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kNeg>>()));
  r.Add(FloatKernel(onnx, "Abs", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kAbs>>()));
  r.Add(FloatKernel(onnx, "Sqrt", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kSqrt>>()));
  r.Add(FloatKernel(onnx, "Reciprocal", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kReciprocal>>()));
  r.Add(FloatKernel(onnx, "LeakyRelu", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kLeakyRelu, 10>>()));
  r.Add(FloatKernel(onnx, "Elu", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kElu, 1000>>()));
  r.Add(FloatKernel(onnx, "HardSigmoid", 6, kMaxOpset, Make<UnaryOf<UnaryOp::kHardSigmoid, 200, 500>>()));
  r.Add(FloatKernel(onnx, "HardSwish", 14, kMaxOpset, Make<UnaryOf<UnaryOp::kHardSwish>>()));
  r.Add(FloatKernel(onnx, "Clip", 6, 10, Make<Clip>()));
  KernelDef clip = FloatKernel(onnx, "Clip", 11, kMaxOpset, Make<Clip>());
  clip.host_inputs = {1, 2};  // min, max
  r.Add(std::move(clip));
  KernelDef clip_grad = FloatKernel(tandem, "ClipGrad", 1, kMaxOpset, Make<ClipGrad>());
  clip_grad.host_inputs = {2, 3};
  r.Add(std::move(clip_grad));
  r.Add(FloatKernel(onnx, "Add", 7, kMaxOpset, Make<BinaryOf<BinaryOp::kAdd>>()));
  r.Add(FloatKernel(onnx, "Sub", 7, kMaxOpset, Make<BinaryOf<BinaryOp::kSub>>()));
  r.Add(FloatKernel(onnx, "Mul", 7, kMaxOpset, Make<BinaryOf<BinaryOp::kMul>>()));
  r.Add(FloatKernel(onnx, "Div", 7, kMaxOpset, Make<BinaryOf<BinaryOp::kDiv>>()));
  r.Add(FloatKernel(onnx, "Pow", 7, kMaxOpset, Make<BinaryOf<BinaryOp::kPow>>()));
  r.Add(FloatKernel(onnx, "Sum", 8, kMaxOpset, Make<Sum>()));
  r.Add(FloatKernel(tandem, "ReluGrad", 1, kMaxOpset, Make<BinaryOf<BinaryOp::kReluGrad>>()));
  r.Add(FloatKernel(tandem, "TanhGrad", 1, kMaxOpset, Make<BinaryOf<BinaryOp::kTanhGrad>>()));
  r.Add(FloatKernel(tandem, "SigmoidGrad", 1, kMaxOpset, Make<BinaryOf<BinaryOp::kSigmoidGrad>>()));
  r.Add(FloatKernel(tandem, "LeakyReluGrad", 1, kMaxOpset, Make<BinaryOf<BinaryOp::kLeakyReluGrad>>()));
  KernelDef like = FloatKernel(tandem, "ScalarLike", 1, kMaxOpset, Make<ScalarLike>());
  like.metadata_inputs = {0};
  r.Add(std::move(like));
}

}  // namespace tandem::cuda
