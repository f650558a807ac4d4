// BatchNormalization (inference, and training mode with the running statistics updated)
// and ai.tandem BatchNormalizationGrad(dY, X, scale[, mean, var]) -> dX, dScale, dB on the
// GPU, float32, per channel (spatial mode). X [N, C, ...] is viewed as [N, C, S, 1].
//   inference: cudnnBatchNormalizationForwardInference;
//   training: cudnnBatchNormalizationForwardTraining (batch statistics saved, no running
//     average of cuDNN's: it would use the unbiased variance), then batch_norm.cu's
//     running statistics with the biased one, as ONNX and the CPU;
//   gradient, training mode: cudnnBatchNormalizationBackward (statistics recomputed);
//   gradient with constant statistics: batch_norm.cu (cuDNN has no such pass).
// spatial = 0 (opsets before 9) and the CPU's channel-blocked layout stay on the CPU.
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/kernels/register.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cuDNN 9's legacy API (conv_ops.cc)

namespace tandem::cuda {
namespace {

// X's descriptor as [N, C, S, 1] and the per-channel one cuDNN derives from it.
class BatchNormDescs {
 public:
  ~BatchNormDescs() {
    for (auto* d : {x_, bn_}) if (d) cudnnDestroyTensorDescriptor(d);
  }
  absl::Status Set(const Dims& x) {
    const int64_t s = x.size() < 2 ? 0 : NumElements(Dims(x.begin() + 2, x.end()));
    if (x.size() < 2 || x[0] > INT32_MAX || x[1] > INT32_MAX || s > INT32_MAX || NumElements(x) > INT32_MAX)
      return absl::UnimplementedError("BatchNormalization of " + DimsToString(x) + " is past cuDNN's int sizes");
    TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&x_));
    TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&bn_));
    TANDEM_CUDA_RETURN(cudnnSetTensor4dDescriptor(x_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(x[0]),
                                                  static_cast<int>(x[1]), static_cast<int>(s), 1));
    TANDEM_CUDA_RETURN(cudnnDeriveBNTensorDescriptor(bn_, x_, CUDNN_BATCHNORM_SPATIAL));
    return absl::OkStatus();
  }
  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnTensorDescriptor_t bn() const { return bn_; }

 private:
  cudnnTensorDescriptor_t x_ = nullptr, bn_ = nullptr;
};

bool TrainingMode(const Node& n, int opset) {
  return opset >= 14 ? n.attr_int("training_mode", 0) != 0 : n.has_output(1);
}

class BatchNormKernel : public Kernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)),
        opset_(info.opset),
        training_(TrainingMode(info.node, info.opset)),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)),
        momentum_(info.node.attr_float("momentum", 0.9f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1, 2, 3, 4});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    const Tensor &scale = *ctx.input(1), &bias = *ctx.input(2), &mean = *ctx.input(3), &var = *ctx.input(4);
    if (x.rank() < 2) return absl::InvalidArgumentError("X must have rank >= 2, got " + DimsToString(x.dims()));
    const int64_t c = x.dim(1);
    for (const Tensor* p : {&scale, &bias, &mean, &var})
      if (p->numel() != c) return absl::InvalidArgumentError("parameters must hold one value per channel");
    auto y = Output(ctx, 0, DataType::kFloat, x.dims());
    if (!y.ok()) return y.status();
    if (x.numel() == 0) {  // cuDNN refuses zero dims
      if (training_) return absl::InvalidArgumentError("training mode needs a non-empty batch");
      return absl::OkStatus();
    }
    BatchNormDescs d;
    if (s = d.Set(x.dims()); !s.ok()) return s;
    const float one = 1.f, zero = 0.f;
    if (!training_) {
      TANDEM_CUDA_RETURN(cudnnBatchNormalizationForwardInference(
          prov_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, d.x(), x.data<float>(), d.x(), (*y)->data<float>(),
          d.bn(), scale.data<float>(), bias.data<float>(), mean.data<float>(), var.data<float>(), epsilon_));
      return absl::OkStatus();
    }
    auto save_mean = Scratch(ctx, DataType::kFloat, {c});
    if (!save_mean.ok()) return save_mean.status();
    auto save_inv = Scratch(ctx, DataType::kFloat, {c});
    if (!save_inv.ok()) return save_inv.status();
    TANDEM_CUDA_RETURN(cudnnBatchNormalizationForwardTraining(
        prov_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, d.x(), x.data<float>(), d.x(), (*y)->data<float>(), d.bn(),
        scale.data<float>(), bias.data<float>(), 0.0, nullptr, nullptr, epsilon_, save_mean->data<float>(),
        save_inv->data<float>()));
    BatchNormStats st;
    st.save_mean = save_mean->data<float>();
    st.save_inv_std = save_inv->data<float>();
    st.input_mean = mean.data<float>();
    st.input_var = var.data<float>();
    st.epsilon = epsilon_;
    st.momentum = momentum_;
    st.channels = c;
    float** outs[4] = {&st.running_mean, &st.running_var, &st.batch_mean, &st.batch_var};
    for (int o = 1; o <= 4; ++o) {
      if (!ctx.output_wanted(o) || (o > 2 && opset_ >= 14)) continue;
      auto t = Output(ctx, o, DataType::kFloat, {c});
      if (!t.ok()) return t.status();
      *outs[o - 1] = (*t)->data<float>();
    }
    TANDEM_CUDA_RETURN(LaunchBatchNormStats(st, prov_.stream()));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  int opset_;
  bool training_;
  double epsilon_, momentum_;
};

class BatchNormGradKernel : public Kernel {
 public:
  explicit BatchNormGradKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)),
        training_(info.node.attr_int("training_mode", 0) != 0),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, training_ ? std::initializer_list<int>{0, 1, 2} : std::initializer_list<int>{0, 1, 2, 3, 4});
    if (!s.ok()) return s;
    const Tensor &dy = *ctx.input(0), &x = *ctx.input(1), &scale = *ctx.input(2);
    if (x.rank() < 2 || dy.dims() != x.dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " and X " + DimsToString(x.dims()) +
                                        " must be one [N, C, ...] shape");
    const int64_t c = x.dim(1);
    if (scale.numel() != c) return absl::InvalidArgumentError("scale must hold one value per channel");
    // Every output cuDNN writes; the unwanted ones into scratch.
    Tensor outs[3];
    const Dims dims[3] = {x.dims(), {c}, {c}};
    for (int o = 0; o < 3; ++o) {
      if (ctx.output_wanted(o)) {
        auto t = Output(ctx, o, DataType::kFloat, dims[o]);
        if (!t.ok()) return t.status();
        outs[o] = **t;
      } else if (training_) {
        auto t = Scratch(ctx, DataType::kFloat, dims[o]);
        if (!t.ok()) return t.status();
        outs[o] = std::move(*t);
      }
    }
    auto data = [](Tensor& t) { return t.defined() ? t.data<float>() : nullptr; };
    if (!training_) {
      const Tensor &mean = *ctx.input(3), &var = *ctx.input(4);
      if (mean.numel() != c || var.numel() != c)
        return absl::InvalidArgumentError("mean and var must hold one value per channel");
      BatchNormConstGrad g;
      g.dy = dy.data<float>();
      g.x = x.data<float>();
      g.scale = scale.data<float>();
      g.mean = mean.data<float>();
      g.var = var.data<float>();
      g.dx = data(outs[0]);
      g.dscale = data(outs[1]);
      g.dbias = data(outs[2]);
      g.epsilon = epsilon_;
      g.n = x.dim(0);
      g.channels = c;
      g.s = NumElements(Dims(x.dims().begin() + 2, x.dims().end()));
      TANDEM_CUDA_RETURN(LaunchBatchNormConstGrad(g, prov_.stream()));
      return absl::OkStatus();
    }
    if (x.numel() == 0) return absl::InvalidArgumentError("training mode needs a non-empty batch");
    BatchNormDescs d;
    if (s = d.Set(x.dims()); !s.ok()) return s;
    const float one = 1.f, zero = 0.f;
    TANDEM_CUDA_RETURN(cudnnBatchNormalizationBackward(
        prov_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, d.x(), x.data<float>(), d.x(), dy.data<float>(),
        d.x(), outs[0].data<float>(), d.bn(), scale.data<float>(), outs[1].data<float>(), outs[2].data<float>(), epsilon_,
        nullptr, nullptr));
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  bool training_;
  double epsilon_;
};

}  // namespace

bool BatchNormAccepts(const KernelInfo& info) {
  const Node& n = info.node;
  if (n.attr_int("channel_block", 0) != 0) return false;                      // the CPU's layout
  if (info.opset < 9 && n.op_type == "BatchNormalization" && n.attr_int("spatial", 1) == 0) return false;
  return true;
}

void RegisterBatchNormKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "BatchNormalization", 1, kMaxOpset, Make<BatchNormKernel>()));
  r.Add(FloatKernel("ai.tandem", "BatchNormalizationGrad", 1, kMaxOpset, Make<BatchNormGradKernel>()));
}

}  // namespace tandem::cuda
