#include "providers/cuda/kernels/conv_plan.h"

#include <algorithm>
#include <string>

#include "providers/cuda/cuda_check.h"

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

}  // namespace

ConvPlan::~ConvPlan() {
  for (auto* t : {x_, y_, b_}) if (t) cudnnDestroyTensorDescriptor(t);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
}

absl::Status ConvPlan::Build(const CudnnConvShape& s, bool tf32) {
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

absl::Status ConvPlan::Forward(CudaProvider& prov, const float* x, const float* w, const float* b, float* y) {
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

absl::Status ConvPlan::BackwardData(CudaProvider& prov, const float* w, const float* dy, float* dx) {
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

absl::Status ConvPlan::BackwardFilter(CudaProvider& prov, const float* x, const float* dy, float* dw) {
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

absl::Status ConvPlan::BackwardBias(CudaProvider& prov, const float* dy, float* db) {
  const float one = 1.f, zero = 0.f;
  TANDEM_CUDA_RETURN(cudnnConvolutionBackwardBias(prov.cudnn(), &one, y_, dy, &zero, b_, db));
  return absl::OkStatus();
}

absl::StatusOr<ConvPlan*> ConvPlanCache::For(const CudnnConvShape& shape) {
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

}  // namespace tandem::cuda
