// ONNX SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (opset 12+) and the
// ai.tandem SoftmaxCrossEntropyLossGrad / NegativeLogLikelihoodLossGrad on the GPU, over
// class_loss.cu: the classifier's loss and its gradient stay on the device with the
// logits, so a training step reads back only the loss. int64 labels (int32 ones are
// declined at placement: accepts.cc); weight, ignore_index and the three reductions as
// on the CPU. A label out of range gives a NaN loss here, where the CPU refuses it by
// name (checking would cost a read-back every step); the trainer stops on a NaN loss.
#include "ops/loss_reduction.h"
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {
namespace {

// What the forward and the gradient share: attributes, shape checks, the rows' view.
class ClassLossBase : public Kernel {
 protected:
  explicit ClassLossBase(const KernelInfo& info)
      : prov_(ProviderOf(info)),
        nll_(info.node.op_type.rfind("NegativeLogLikelihoodLoss", 0) == 0),
        reduction_(ParseLossReduction(info.node)),
        has_ignore_(info.node.has_attr("ignore_index")),
        ignore_index_(info.node.attr_int("ignore_index", 0)) {}

  // x [N, C, D...], labels [N, D...] int64, weight [C] or null.
  absl::StatusOr<ClassLossArgs> Args(const Tensor& x, const Tensor* labels, const Tensor* weight) const {
    if (!reduction_.ok()) return reduction_.status();
    if (!labels) return absl::InvalidArgumentError("missing the labels input");
    if (x.dtype() != DataType::kFloat) return absl::UnimplementedError("the CUDA loss takes float32 logits");
    if (x.rank() < 2) return absl::InvalidArgumentError("logits must have rank >= 2 ([N, C, ...]), got " + DimsToString(x.dims()));
    Dims label_dims = {x.dim(0)};
    for (int i = 2; i < x.rank(); ++i) label_dims.push_back(x.dim(i));
    if (labels->dims() != label_dims)
      return absl::InvalidArgumentError("labels shape " + DimsToString(labels->dims()) + " does not match logits shape " +
                                        DimsToString(x.dims()));
    if (labels->dtype() != DataType::kInt64) return absl::UnimplementedError("the CUDA loss takes int64 labels");
    if (weight && (weight->dims() != Dims{x.dim(1)} || weight->dtype() != DataType::kFloat))
      return absl::InvalidArgumentError("weight must be a float [C] tensor");
    ClassLossArgs a;
    a.x = x.data<float>();
    a.labels = labels->data<int64_t>();
    a.weight = weight ? weight->data<float>() : nullptr;
    a.n = x.dim(0);
    a.c = x.dim(1);
    a.d = NumElements(Dims(x.dims().begin() + 2, x.dims().end()));
    a.log_probs_given = nll_;
    a.has_ignore = has_ignore_;
    a.ignore_index = ignore_index_;
    return a;
  }
  // The mean is over the weights of the counted labels when weights or ignore_index are in
  // play, else over every row (numpy's reference, as loss.cc).
  bool MeanByWeights(const Tensor* weight) const { return weight || has_ignore_; }

  CudaProvider& prov_;
  bool nll_;
  absl::StatusOr<LossReduction> reduction_;
  bool has_ignore_;
  int64_t ignore_index_;
};

class ClassLoss : public ClassLossBase {
 public:
  explicit ClassLoss(const KernelInfo& info) : ClassLossBase(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* labels = ctx.input(1);
    const Tensor* weight = ctx.input(2);
    auto a = Args(x, labels, weight);
    if (!a.ok()) return a.status();
    float* log_prob = nullptr;
    if (!nll_ && ctx.output_wanted(1)) {
      auto lp = Output(ctx, 1, DataType::kFloat, x.dims());
      if (!lp.ok()) return lp.status();
      log_prob = (*lp)->data<float>();
    }
    const int64_t rows = a->n * a->d;
    if (*reduction_ == LossReduction::kNone) {
      auto loss = Output(ctx, 0, DataType::kFloat, labels->dims());
      if (!loss.ok()) return loss.status();
      TANDEM_CUDA_RETURN(LaunchClassLossRows(*a, (*loss)->data<float>(), nullptr, log_prob, prov_.stream()));
      return absl::OkStatus();
    }
    const bool by_weights = *reduction_ == LossReduction::kMean && MeanByWeights(weight);
    auto loss_row = Scratch(ctx, DataType::kFloat, {rows});
    if (!loss_row.ok()) return loss_row.status();
    Tensor weight_row;
    if (by_weights) {
      auto w = Scratch(ctx, DataType::kFloat, {rows});
      if (!w.ok()) return w.status();
      weight_row = std::move(*w);
    }
    TANDEM_CUDA_RETURN(LaunchClassLossRows(*a, loss_row->data<float>(), by_weights ? weight_row.data<float>() : nullptr,
                                           log_prob, prov_.stream()));
    auto loss = Output(ctx, 0, DataType::kFloat, {});
    if (!loss.ok()) return loss.status();
    const double denom = *reduction_ == LossReduction::kMean ? static_cast<double>(rows) : 1.0;
    TANDEM_CUDA_RETURN(LaunchSumDivided(loss_row->data<float>(), rows, by_weights ? weight_row.data<float>() : nullptr,
                                        denom, (*loss)->data<float>(), prov_.stream()));
    return absl::OkStatus();
  }
};

// (dY, logits, labels [, weight] [, dLogProb]) -> dLogits.
class ClassLossGrad : public ClassLossBase {
 public:
  explicit ClassLossGrad(const KernelInfo& info) : ClassLossBase(info) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* dy = ctx.input(0);
    const Tensor& x = *ctx.input(1);
    const Tensor* labels = ctx.input(2);
    const Tensor* weight = ctx.input(3);
    const Tensor* dlogp = ctx.input(4);
    auto a = Args(x, labels, weight);
    if (!a.ok()) return a.status();
    if (!dy) {  // no gradient flows in: zero, as on the CPU
      auto dx = Output(ctx, 0, DataType::kFloat, x.dims());
      if (!dx.ok()) return dx.status();
      TANDEM_CUDA_RETURN(LaunchFill((*dx)->data<float>(), x.numel(), 0.f, prov_.stream()));
      return absl::OkStatus();
    }
    if (dy->dtype() != DataType::kFloat) return absl::InvalidArgumentError("dY must be a float tensor");
    const bool per_row = *reduction_ == LossReduction::kNone;
    if (per_row ? dy->dims() != labels->dims() : dy->numel() != 1)
      return absl::InvalidArgumentError("dY of shape " + DimsToString(dy->dims()) + " does not fit reduction " +
                                        (per_row ? "none" : "sum/mean"));
    if (dlogp && (nll_ || dlogp->dims() != x.dims() || dlogp->dtype() != DataType::kFloat))
      return absl::InvalidArgumentError("dLogProb must match the logits");
    const int64_t rows = a->n * a->d;
    double denom = 1.0;
    Tensor denom_device;
    if (*reduction_ == LossReduction::kMean) {
      denom = static_cast<double>(rows);
      if (MeanByWeights(weight)) {  // the forward's normaliser: the counted labels' weights
        auto w = Scratch(ctx, DataType::kFloat, {rows});
        if (!w.ok()) return w.status();
        auto sum = Scratch(ctx, DataType::kFloat, {});
        if (!sum.ok()) return sum.status();
        TANDEM_CUDA_RETURN(LaunchClassLossRows(*a, nullptr, w->data<float>(), nullptr, prov_.stream()));
        TANDEM_CUDA_RETURN(LaunchSumDivided(w->data<float>(), rows, nullptr, 1.0, sum->data<float>(), prov_.stream()));
        denom_device = std::move(*sum);
      }
    }
    auto dx = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!dx.ok()) return dx.status();
    TANDEM_CUDA_RETURN(LaunchClassLossGrad(*a, dy->data<float>(), per_row,
                                           denom_device.defined() ? denom_device.data<float>() : nullptr, denom,
                                           dlogp ? dlogp->data<float>() : nullptr, (*dx)->data<float>(),
                                           prov_.stream()));
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterClassLossKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "SoftmaxCrossEntropyLoss", 12, kMaxOpset, Make<ClassLoss>()));
  r.Add(FloatKernel("", "NegativeLogLikelihoodLoss", 12, kMaxOpset, Make<ClassLoss>()));
  r.Add(FloatKernel("ai.tandem", "SoftmaxCrossEntropyLossGrad", 1, kMaxOpset, Make<ClassLossGrad>()));
  r.Add(FloatKernel("ai.tandem", "NegativeLogLikelihoodLossGrad", 1, kMaxOpset, Make<ClassLossGrad>()));
}

}  // namespace tandem::cuda
