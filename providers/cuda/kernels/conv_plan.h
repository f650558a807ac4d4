// A cuDNN convolution plan: the tensor, filter and convolution descriptors of one
// shape (cudnn_shapes.h) and, chosen on first use of each pass, the algorithm cuDNN's
// heuristic ranks first among the deterministic, direct-sum (no FFT/Winograd),
// non-tensor-op ones within the workspace cap. Math is CUDNN_FMA_MATH: float32 stays
// float32 (no TF32 rounding), as on the CPU; under --precision tf32, tensor-op math and
// any algorithm. Used by Conv/FusedConv/ConvGrad (conv_ops.cc) and ConvTranspose
// (conv_transpose_ops.cc, the backward-data pass of the equivalent convolution).
// cuDNN 9 keeps this (legacy, deprecated) API; its graph API would need cudnn-frontend,
// which no package here provides.
#pragma once
#include <cudnn.h>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "providers/cuda/cuda_provider.h"
#include "providers/cuda/cudnn_shapes.h"

namespace tandem::cuda {

// The descriptors of one input shape and, chosen on first use, the algorithms of the
// passes this node runs (forward; backward data and filter for ConvGrad).
class ConvPlan {
 public:
  ~ConvPlan();

  // `tf32`: tensor-op math allowed (--precision tf32), else float32 FMA math only.
  absl::Status Build(const CudnnConvShape& s, bool tf32);

  // y = conv(x, w) (+ b).
  absl::Status Forward(CudaProvider& prov, const float* x, const float* w, const float* b, float* y);

  // dx = the gradient of conv(x, w) with respect to x, from dy.
  absl::Status BackwardData(CudaProvider& prov, const float* w, const float* dy, float* dx);

  // dw = the gradient with respect to w, from x and dy.
  absl::Status BackwardFilter(CudaProvider& prov, const float* x, const float* dy, float* dw);

  // db = dy summed over every dim but the channels.
  absl::Status BackwardBias(CudaProvider& prov, const float* dy, float* db);

 private:
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, b_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  std::optional<cudnnConvolutionFwdAlgo_t> fwd_;
  std::optional<cudnnConvolutionBwdDataAlgo_t> data_;
  std::optional<cudnnConvolutionBwdFilterAlgo_t> filter_;
  size_t fwd_ws_ = 0, data_ws_ = 0, filter_ws_ = 0;
};

// The plans of one node, by shape (CudnnConvShape::Key()); built on first use.
class ConvPlanCache {
 public:
  explicit ConvPlanCache(bool tf32) : tf32_(tf32) {}
  // The plan of a shape with no zero dim (cuDNN refuses those).
  absl::StatusOr<ConvPlan*> For(const CudnnConvShape& shape);

 private:
  bool tf32_;
  std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>> plans_;
};

}  // namespace tandem::cuda
