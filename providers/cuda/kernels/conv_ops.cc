// Conv and ai.tandem FusedConv (bias + Relu/Tanh/Sigmoid/LeakyRelu/Clip) forward, and
// ai.tandem ConvGrad (data, filter and bias gradients), on cuDNN, float32, over the plans
// of conv_plan.h (one per input shape). Empty tensors never reach cuDNN (it refuses zero
// dims): their outputs are made here. The bias is cudnnAddTensor over the output, the
// activation one elementwise launch; a FusedConv that also pools (pool = "MaxPool2x2",
// 2-D) convolves into scratch and max-pools 2x2 with stride 2 from there (cudnn_pool.h).
// Asymmetric padding and > 3 spatial dims are declined at placement (CudnnConvAccepts)
// and run on the CPU.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/cudnn_shapes.h"
#include "providers/cuda/kernels/conv_plan.h"
#include "providers/cuda/kernels/cudnn_pool.h"
#include "providers/cuda/kernels/register.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tandem::cuda {
namespace {

// The plans of one Conv node, by input shape.
class ConvPlans {
 public:
  ConvPlans(const Node& node, bool tf32) : node_(node), group_(node.attr_int("group", 1)), cache_(tf32) {}
  // The descriptors' shape for X and W (W [M, C/group, kernel...]), host arithmetic only.
  absl::StatusOr<CudnnConvShape> Shape(const Dims& x, const Dims& w) const {
    if (x.size() < 3 || w.size() != x.size())
      return absl::InvalidArgumentError("Conv needs X [N, C, spatial...] and W of its rank, got X " + DimsToString(x) +
                                        ", W " + DimsToString(w));
    auto geo = ComputeWindowGeometry(node_, Dims(x.begin() + 2, x.end()), std::vector<int64_t>(w.begin() + 2, w.end()),
                                     false);
    if (!geo.ok()) return geo.status();
    return CudnnConvShapeOf(x, w, *geo, group_);
  }
  absl::StatusOr<ConvPlan*> For(const CudnnConvShape& shape) { return cache_.For(shape); }

 private:
  const Node node_;  // the attributes the geometry reads
  int64_t group_;
  ConvPlanCache cache_;
};

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)),
        plans_(info.node, ProviderOf(info).tf32()),
        activation_(FusedActivationOp(info.node.attr_string("activation", ""))),
        activation_alpha_(info.node.attr_float("activation_alpha", 0.01f)),
        activation_beta_(info.node.attr_float("activation_beta", 0.f)),
        pool_(info.node.attr_string("pool", "") == "MaxPool2x2") {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1});
    if (!s.ok()) return s;
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (b && (b->dtype() != DataType::kFloat || w.rank() < 1 || b->numel() != w.dim(0)))
      return absl::InvalidArgumentError("Conv bias must hold one float per output channel");
    auto shaped = plans_.Shape(x.dims(), w.dims());
    if (!shaped.ok()) return shaped.status();
    const CudnnConvShape& shape = *shaped;
    // With a fused pool the convolution goes to scratch and the pool writes the output.
    std::optional<CudnnPoolShape> pooled;
    if (pool_) {
      auto p = TwoByTwo(shape.onnx_y_dims);
      if (!p.ok()) return p.status();
      pooled = std::move(*p);
    }
    auto y = Output(ctx, 0, DataType::kFloat, pooled ? pooled->onnx_y_dims : shape.onnx_y_dims);
    if (!y.ok()) return y.status();
    if ((*y)->numel() == 0) return absl::OkStatus();
    Tensor conv_out;
    if (pooled) {
      auto t = Scratch(ctx, DataType::kFloat, shape.onnx_y_dims);
      if (!t.ok()) return t.status();
      conv_out = std::move(*t);
    } else {
      conv_out = **y;
    }
    const int64_t count = conv_out.numel();
    float* yd = conv_out.data<float>();
    if (x.numel() == 0 || w.numel() == 0) {  // an empty sum: the bias alone
      TANDEM_CUDA_RETURN(LaunchFill(yd, count, 0.f, prov_.stream()));
      if (b) {
        s = AddChannelBias(b->data<float>(), conv_out, prov_.stream());
        if (!s.ok()) return s;
      }
    } else {
      auto plan = plans_.For(shape);
      if (!plan.ok()) return plan.status();
      s = (*plan)->Forward(prov_, x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr, yd);
      if (!s.ok()) return s;
    }
    if (activation_) TANDEM_CUDA_RETURN(LaunchUnary(*activation_, yd, yd, count, activation_alpha_, prov_.stream(),
                                               activation_beta_));
    if (!pooled) return absl::OkStatus();
    auto& pool = pools_[pooled->Key()];
    if (!pool) {
      pool = std::make_unique<CudnnPool>();
      absl::Status built = pool->Build(*pooled, MaxPoolMode());
      if (!built.ok()) {
        pool.reset();
        return built;
      }
    }
    return pool->Forward(prov_.cudnn(), yd, (*y)->data<float>());
  }

  // The fused pool: 2x2 windows, stride 2, no padding, over a 2-D convolution's output.
  static absl::StatusOr<CudnnPoolShape> TwoByTwo(const Dims& conv_out) {
    if (conv_out.size() != 4) return absl::UnimplementedError("a fused 2x2 pool needs a 2-D convolution");
    WindowGeometry g;
    g.kernel = g.strides = {2, 2};
    g.dilations = {1, 1};
    g.pads_begin = g.pads_end = {0, 0};
    g.out = {conv_out[2] / 2, conv_out[3] / 2};
    return CudnnPoolShapeOf(conv_out, g);
  }

 private:
  CudaProvider& prov_;
  ConvPlans plans_;
  std::optional<UnaryOp> activation_;
  float activation_alpha_, activation_beta_;
  bool pool_;
  std::map<std::vector<int64_t>, std::unique_ptr<CudnnPool>> pools_;
};

// ai.tandem ConvGrad(dY, X, W) -> dX, dW, dB (providers/cpu/kernels/nn/conv_grad.cc), each
// output optional; relu_mask = 1 zeroes dX where X <= 0.
class ConvGradKernel : public Kernel {
 public:
  explicit ConvGradKernel(const KernelInfo& info)
      : prov_(ProviderOf(info)), plans_(info.node, ProviderOf(info).tf32()), relu_mask_(info.node.attr_int("relu_mask", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    absl::Status s = RequireFloat(ctx, {0, 1, 2});
    if (!s.ok()) return s;
    const Tensor& dy = *ctx.input(0);
    const Tensor& x = *ctx.input(1);
    const Tensor& w = *ctx.input(2);
    auto shape = plans_.Shape(x.dims(), w.dims());
    if (!shape.ok()) return shape.status();
    if (dy.dims() != shape->onnx_y_dims)
      return absl::InvalidArgumentError("dY " + DimsToString(dy.dims()) + " is not the convolution's output shape " +
                                        DimsToString(shape->onnx_y_dims));
    const bool empty = dy.numel() == 0 || x.numel() == 0 || w.numel() == 0;  // every gradient is 0
    ConvPlan* plan = nullptr;
    if (!empty) {
      auto p = plans_.For(*shape);
      if (!p.ok()) return p.status();
      plan = *p;
    }
    if (ctx.output_wanted(0)) {
      auto dx = Output(ctx, 0, DataType::kFloat, x.dims());
      if (!dx.ok()) return dx.status();
      float* dxd = (*dx)->data<float>();
      if (empty) {
        TANDEM_CUDA_RETURN(LaunchFill(dxd, x.numel(), 0.f, prov_.stream()));
      } else {
        s = plan->BackwardData(prov_, w.data<float>(), dy.data<float>(), dxd);
        if (!s.ok()) return s;
        if (relu_mask_)  // ReluGrad(dX, X): dX where X > 0
          TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kReluGrad, dxd, x.data<float>(), dxd, x.numel(), nullptr, 0.f,
                                          prov_.stream()));
      }
    }
    if (ctx.output_wanted(1)) {
      auto dw = Output(ctx, 1, DataType::kFloat, w.dims());
      if (!dw.ok()) return dw.status();
      if (empty) TANDEM_CUDA_RETURN(LaunchFill((*dw)->data<float>(), w.numel(), 0.f, prov_.stream()));
      else if (s = plan->BackwardFilter(prov_, x.data<float>(), dy.data<float>(), (*dw)->data<float>()); !s.ok()) return s;
    }
    if (ctx.output_wanted(2)) {
      auto db = Output(ctx, 2, DataType::kFloat, {w.dim(0)});
      if (!db.ok()) return db.status();
      if (empty) TANDEM_CUDA_RETURN(LaunchFill((*db)->data<float>(), w.dim(0), 0.f, prov_.stream()));
      else if (s = plan->BackwardBias(prov_, dy.data<float>(), (*db)->data<float>()); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  CudaProvider& prov_;
  ConvPlans plans_;
  bool relu_mask_;
};

}  // namespace

bool CudnnConvAccepts(const KernelInfo& info) {
  const Node& n = info.node;
  if (n.has_input(3) || n.has_input(4)) return false;  // the CPU's residual Sum and channel Scale
  const std::string pool = n.attr_string("pool", "");
  if (!pool.empty() && pool != "MaxPool2x2") return false;
  const std::string activation = n.attr_string("activation", "");
  if (!activation.empty() && !FusedActivationOp(activation)) return false;
  if (info.input_shapes.size() < 2 || !info.input_shapes[0].rank_known) return true;  // known at run time only
  const Shape& xs = info.input_shapes[0];
  if (xs.dims.size() < 3 || xs.dims.size() > 5) return false;
  if (!pool.empty() && xs.dims.size() != 4) return false;  // the fused pool is 2-D
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  const Shape& ws = info.input_shapes[1];
  if (!xs.fully_known() || !ws.rank_known || !ws.fully_known()) {
    if (same) return false;  // its padding may come out asymmetric: cannot tell yet
    const std::vector<int64_t> pads = n.attr_ints("pads", {});
    for (size_t i = 0; i < pads.size() / 2; ++i)
      if (pads[i] != pads[i + pads.size() / 2]) return false;
    return true;
  }
  const Dims x = xs.ToDims(), w = ws.ToDims();
  if (w.size() != x.size()) return false;
  auto geo = ComputeWindowGeometry(n, Dims(x.begin() + 2, x.end()), std::vector<int64_t>(w.begin() + 2, w.end()), false);
  if (!geo.ok()) return false;  // the CPU names the bad attribute
  return CudnnConvShapeOf(x, w, *geo, n.attr_int("group", 1)).ok();
}

void RegisterConvKernels(KernelRegistry& r) {
  r.Add(FloatKernel("", "Conv", 1, kMaxOpset, Make<ConvKernel>()));
  r.Add(FloatKernel("ai.tandem", "FusedConv", 1, kMaxOpset, Make<ConvKernel>()));
  r.Add(FloatKernel("ai.tandem", "ConvGrad", 1, kMaxOpset, Make<ConvGradKernel>()));
}

}  // namespace tandem::cuda
