// Softmax and LogSoftmax (all opsets: before 13 over every dim from `axis` on, from 13
// over `axis` alone) and the ai.tandem SoftmaxGrad / LogSoftmaxGrad (dY, Y; attrs axis,
// coerce) on cuDNN's channel softmax, float32, the max subtracted (ACCURATE). The view
// of the tensor comes from cudnn_shapes.h; descriptors are made per call (cheap, no
// algorithm to choose).
#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/cudnn_shapes.h"
#include "providers/cuda/kernels/register.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // cuDNN 9's legacy API (conv_ops.cc)

namespace tandem::cuda {
namespace {

// A tensor descriptor that destroys itself.
class TensorDesc {
 public:
  ~TensorDesc() {
    if (d_) cudnnDestroyTensorDescriptor(d_);
  }
  absl::Status Set(const CudnnSoftmaxShape& s) {
    TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&d_));
    TANDEM_CUDA_RETURN(cudnnSetTensorNdDescriptor(d_, CUDNN_DATA_FLOAT, 4, s.dims.data(), s.strides.data()));
    return absl::OkStatus();
  }
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

class SoftmaxKernel : public Kernel {
 public:
  // Forward ops read the opset's default axis; the gradients get axis and coerce.
  SoftmaxKernel(const KernelInfo& info, bool log, bool grad)
      : prov_(ProviderOf(info)),
        log_(log),
        grad_(grad),
        coerce_(grad ? info.node.attr_int("coerce", 0) != 0 : info.opset < 13),
        axis_(info.node.attr_int("axis", coerce_ ? 1 : -1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, grad_ ? std::initializer_list<int>{0, 1} : std::initializer_list<int>{0});
    if (!s.ok()) return s;
    const Tensor& a = *ctx.input(0);  // X, or dY for a gradient
    if (grad_ && ctx.input(1)->dims() != a.dims())
      return absl::InvalidArgumentError("Y " + DimsToString(ctx.input(1)->dims()) + " differs from dY " + DimsToString(a.dims()));
    auto shape = CudnnSoftmaxShapeOf(a.dims(), axis_, coerce_);
    if (!shape.ok()) return shape.status();
    auto out = Output(ctx, 0, DataType::kFloat, a.dims());
    if (!out.ok()) return out.status();
    if (a.numel() == 0) return absl::OkStatus();
    TensorDesc desc;
    if (s = desc.Set(*shape); !s.ok()) return s;
    const float one = 1.f, zero = 0.f;
    const cudnnSoftmaxAlgorithm_t algo = log_ ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
    if (!grad_) {
      TANDEM_CUDA_RETURN(cudnnSoftmaxForward(prov_.cudnn(), algo, CUDNN_SOFTMAX_MODE_CHANNEL, &one, desc.get(),
                                             a.data<float>(), &zero, desc.get(), (*out)->data<float>()));
    } else {
      const Tensor& y = *ctx.input(1);
      TANDEM_CUDA_RETURN(cudnnSoftmaxBackward(prov_.cudnn(), algo, CUDNN_SOFTMAX_MODE_CHANNEL, &one, desc.get(),
                                              y.data<float>(), desc.get(), a.data<float>(), &zero, desc.get(),
                                              (*out)->data<float>()));
    }
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  bool log_, grad_, coerce_;
  int64_t axis_;
};

KernelFactory MakeSoftmax(bool log, bool grad) {
  return [log, grad](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<SoftmaxKernel>(info, log, grad);
  };
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "Softmax", 1, kMaxOpset, MakeSoftmax(false, false)));
  r.Add(FloatKernel("", "LogSoftmax", 1, kMaxOpset, MakeSoftmax(true, false)));
  r.Add(FloatKernel("ai.tandem", "SoftmaxGrad", 1, kMaxOpset, MakeSoftmax(false, true)));
  r.Add(FloatKernel("ai.tandem", "LogSoftmaxGrad", 1, kMaxOpset, MakeSoftmax(true, true)));
}

}  // namespace tandem::cuda
