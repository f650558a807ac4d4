// Conv and ai.tandem FusedConv (bias + Relu/Tanh/Sigmoid/LeakyRelu/Clip) forward, and
// ai.tandem ConvGrad (data, filter and bias gradients), on cuDNN, float32.
//
// One plan per input shape (cudnn_shapes.h: the descriptors' arrays; cached by its
// Key()): the tensor, filter and convolution descriptors and, per pass, the algorithm
// cuDNN's heuristic ranks first among the deterministic, direct-sum (no FFT/Winograd),
// non-tensor-op ones within kMaxWorkspace, chosen once (FirstExactAlgorithm). Math is
// CUDNN_FMA_MATH: float32 stays float32 (no TF32 rounding), as on the CPU; under
// --precision tf32, tensor-op math and any algorithm. Empty tensors never reach cuDNN (it
// refuses zero dims): their outputs are made here. The bias is cudnnAddTensor over the
// output, the activation one elementwise launch; a FusedConv that also pools (pool = "MaxPool2x2",
// 2-D) convolves into scratch and max-pools 2x2 with stride 2 from there (cudnn_pool.h).
// Asymmetric padding and > 3 spatial dims are declined at placement (CudnnConvAccepts)
// and run on the CPU.
// cuDNN 9 keeps this (legacy, deprecated) API; its graph API would need cudnn-frontend,
// which no package here provides.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "providers/cuda/cuda_kernel.h"
#include "providers/cuda/cudnn_shapes.h"
#include "providers/cuda/kernels/cudnn_pool.h"
#include "providers/cuda/kernels/register.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tandem::cuda {
namespace {

constexpr size_t kMaxWorkspace = 256u << 20;

// Algorithms that sum in float32 as a direct convolution does (no FFT or Winograd
// transforms, whose rounding differs; the CPU provider uses none either).
bool SumsDirectly(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
}
bool SumsDirectly(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}
bool SumsDirectly(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

// The first algorithm cuDNN's heuristic ranks (best first) that works within
// kMaxWorkspace without tensor-op (TF32) math and sums directly, preferring a
// deterministic one (same bits every run, as the CPU's); a non-deterministic one (atomic
// adds) only when none is. With `tf32` (--precision tf32) tensor-op math and any
// algorithm (FFT, Winograd) are allowed too.
template <typename Perf>
absl::StatusOr<decltype(Perf{}.algo)> FirstExactAlgorithm(const std::vector<Perf>& perf, int found, bool tf32,
                                                          const char* what) {
  for (bool deterministic : {true, false})
    for (int i = 0; i < found; ++i) {
      const Perf& p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspace) continue;
      if (!tf32 && !SumsDirectly(p.algo)) continue;
      if (!tf32 && p.mathType != CUDNN_FMA_MATH && p.mathType != CUDNN_DEFAULT_MATH) continue;  // tensor-op math
      if (deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
      return p.algo;
    }
  return absl::UnimplementedError(std::string("cuDNN offers no float32 direct-sum algorithm for this ") + what);
}

// The descriptors of one input shape and, chosen on first use, the algorithms of the
// passes this node runs (forward; backward data and filter for ConvGrad).
class ConvPlan {
 public:
  ~ConvPlan() {
    for (auto* t : {x_, y_, b_}) if (t) cudnnDestroyTensorDescriptor(t);
    if (w_) cudnnDestroyFilterDescriptor(w_);
    if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  }

  // `tf32`: tensor-op math allowed (--precision tf32), else float32 FMA math only.
  absl::Status Build(const CudnnConvShape& s, bool tf32) {
    const int rank = static_cast<int>(s.x_dims.size());
    TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&x_));
    TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&y_));
    TANDEM_CUDA_RETURN(cudnnCreateTensorDescriptor(&b_));
    TANDEM_CUDA_RETURN(cudnnCreateFilterDescriptor(&w_));
    TANDEM_CUDA_RETURN(cudnnCreateConvolutionDescriptor(&conv_));
    TANDEM_CUDA_RETURN(cudnnSetTensorNdDescriptor(x_, CUDNN_DATA_FLOAT, rank, s.x_dims.data(), s.x_strides.data()));
    TANDEM_CUDA_RETURN(cudnnSetTensorNdDescriptor(y_, CUDNN_DATA_FLOAT, rank, s.y_dims.data(), s.y_strides.data()));
    TANDEM_CUDA_RETURN(cudnnSetTensorNdDescriptor(b_, CUDNN_DATA_FLOAT, rank, s.b_dims.data(), s.b_strides.data()));
    TANDEM_CUDA_RETURN(cudnnSetFilterNdDescriptor(w_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, rank, s.w_dims.data()));
    TANDEM_CUDA_RETURN(cudnnSetConvolutionNdDescriptor(conv_, rank - 2, s.pads.data(), s.strides.data(),
                                                       s.dilations.data(), CUDNN_CROSS_CORRELATION,
                                                       CUDNN_DATA_FLOAT));
    TANDEM_CUDA_RETURN(cudnnSetConvolutionGroupCount(conv_, s.groups));
    TANDEM_CUDA_RETURN(cudnnSetConvolutionMathType(conv_, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    // cuDNN's own idea of the output must be ours.
    std::vector<int> out(rank);
    TANDEM_CUDA_RETURN(cudnnGetConvolutionNdForwardOutputDim(conv_, x_, w_, rank, out.data()));
    if (out != s.y_dims) return absl::InternalError("cuDNN computes another output shape for this convolution");
    return absl::OkStatus();
  }

  // y = conv(x, w) (+ b).
  absl::Status Forward(CudaProvider& prov, const float* x, const float* w, const float* b, float* y) {
    if (!fwd_) {
      int max = 0, found = 0;
      TANDEM_CUDA_RETURN(cudnnGetConvolutionForwardAlgorithmMaxCount(prov.cudnn(), &max));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(std::max(max, 1));
      TANDEM_CUDA_RETURN(cudnnGetConvolutionForwardAlgorithm_v7(prov.cudnn(), x_, w_, conv_, y_,
                                                                static_cast<int>(perf.size()), &found, perf.data()));
      auto algo = FirstExactAlgorithm(perf, found, prov.tf32(), "convolution");
      if (!algo.ok()) return algo.status();
      TANDEM_CUDA_RETURN(cudnnGetConvolutionForwardWorkspaceSize(prov.cudnn(), x_, w_, conv_, y_, *algo, &fwd_ws_));
      fwd_ = *algo;
    }
    auto ws = prov.Workspace(fwd_ws_);
    if (!ws.ok()) return ws.status();
    const float one = 1.f, zero = 0.f;
    TANDEM_CUDA_RETURN(cudnnConvolutionForward(prov.cudnn(), &one, x_, x, w_, w, conv_, *fwd_, *ws, fwd_ws_, &zero,
                                               y_, y));
    if (b) TANDEM_CUDA_RETURN(cudnnAddTensor(prov.cudnn(), &one, b_, b, &one, y_, y));
    return absl::OkStatus();
  }

  // dx = the gradient of conv(x, w) with respect to x, from dy.
  absl::Status BackwardData(CudaProvider& prov, const float* w, const float* dy, float* dx) {
    if (!data_) {
      int max = 0, found = 0;
      TANDEM_CUDA_RETURN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(prov.cudnn(), &max));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(std::max(max, 1));
      TANDEM_CUDA_RETURN(cudnnGetConvolutionBackwardDataAlgorithm_v7(prov.cudnn(), w_, y_, conv_, x_,
                                                                     static_cast<int>(perf.size()), &found, perf.data()));
      auto algo = FirstExactAlgorithm(perf, found, prov.tf32(), "convolution's data gradient");
      if (!algo.ok()) return algo.status();
      TANDEM_CUDA_RETURN(cudnnGetConvolutionBackwardDataWorkspaceSize(prov.cudnn(), w_, y_, conv_, x_, *algo, &data_ws_));
      data_ = *algo;
    }
    auto ws = prov.Workspace(data_ws_);
    if (!ws.ok()) return ws.status();
    const float one = 1.f, zero = 0.f;
    TANDEM_CUDA_RETURN(cudnnConvolutionBackwardData(prov.cudnn(), &one, w_, w, y_, dy, conv_, *data_, *ws, data_ws_,
                                                    &zero, x_, dx));
    return absl::OkStatus();
  }

  // dw = the gradient with respect to w, from x and dy.
  absl::Status BackwardFilter(CudaProvider& prov, const float* x, const float* dy, float* dw) {
    if (!filter_) {
      int max = 0, found = 0;
      TANDEM_CUDA_RETURN(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(prov.cudnn(), &max));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(std::max(max, 1));
      TANDEM_CUDA_RETURN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(prov.cudnn(), x_, y_, conv_, w_,
                                                                       static_cast<int>(perf.size()), &found, perf.data()));
      auto algo = FirstExactAlgorithm(perf, found, prov.tf32(), "convolution's weight gradient");
      if (!algo.ok()) return algo.status();
      TANDEM_CUDA_RETURN(cudnnGetConvolutionBackwardFilterWorkspaceSize(prov.cudnn(), x_, y_, conv_, w_, *algo,
                                                                        &filter_ws_));
      filter_ = *algo;
    }
    auto ws = prov.Workspace(filter_ws_);
    if (!ws.ok()) return ws.status();
    const float one = 1.f, zero = 0.f;
    TANDEM_CUDA_RETURN(cudnnConvolutionBackwardFilter(prov.cudnn(), &one, x_, x, y_, dy, conv_, *filter_, *ws,
                                                      filter_ws_, &zero, w_, dw));
    return absl::OkStatus();
  }

  // db = dy summed over every dim but the channels.
  absl::Status BackwardBias(CudaProvider& prov, const float* dy, float* db) {
    const float one = 1.f, zero = 0.f;
    TANDEM_CUDA_RETURN(cudnnConvolutionBackwardBias(prov.cudnn(), &one, y_, dy, &zero, b_, db));
    return absl::OkStatus();
  }

 private:
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, b_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  std::optional<cudnnConvolutionFwdAlgo_t> fwd_;
  std::optional<cudnnConvolutionBwdDataAlgo_t> data_;
  std::optional<cudnnConvolutionBwdFilterAlgo_t> filter_;
  size_t fwd_ws_ = 0, data_ws_ = 0, filter_ws_ = 0;
};

// The plans of one node, by input shape.
class ConvPlans {
 public:
  ConvPlans(const Node& node, bool tf32) : node_(node), group_(node.attr_int("group", 1)), tf32_(tf32) {}
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
  // The plan of a shape with no zero dim (cuDNN refuses those).
  absl::StatusOr<ConvPlan*> For(const CudnnConvShape& shape) {
    auto& plan = plans_[shape.Key()];
    if (!plan) {
      plan = std::make_unique<ConvPlan>();
      absl::Status built = plan->Build(shape, tf32_);
      if (!built.ok()) {
        plan.reset();
        return built;
      }
    }
    return plan.get();
  }

 private:
  const Node node_;  // the attributes the geometry reads
  int64_t group_;
  bool tf32_;
  std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>> plans_;
};

// y (dims [N, M, ...]) += b broadcast along the channels: the bias of a convolution whose
// sum is empty (no input channels or no kernel taps).
absl::Status AddChannelBias(const float* b, Tensor& y, cudaStream_t stream) {
  Dims bias_dims(y.dims().begin() + 1, y.dims().end());
  std::fill(bias_dims.begin() + 1, bias_dims.end(), 1);
  auto ix = Broadcast(y.dims(), bias_dims);
  if (!ix.ok()) return ix.status();
  TANDEM_CUDA_RETURN(LaunchBinary(BinaryOp::kAdd, y.data<float>(), b, y.data<float>(), y.numel(), &*ix, 0.f, stream));
  return absl::OkStatus();
}

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

// ai.tandem ConvGrad(dY, X, W) -> dX, dW, dB (providers/cpu/kernels/conv_grad.cc), each
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
