// One cuDNN pooling (max, or average with or without the padding counted) for one input
// shape: the descriptors from cudnn_shapes.h's arrays, built once and reused. Shared by
// the pool kernels (pool_ops.cc) and FusedConv's 2x2 max pool (conv_ops.cc).
#pragma once
#include <cudnn.h>

#include "absl/status/status.h"
#include "providers/cuda/cudnn_shapes.h"

namespace tandem::cuda {

class CudnnPool {
 public:
  CudnnPool() = default;
  CudnnPool(const CudnnPool&) = delete;
  CudnnPool& operator=(const CudnnPool&) = delete;
  ~CudnnPool();

  absl::Status Build(const CudnnPoolShape& shape, cudnnPoolingMode_t mode);
  // y = pool(x), on the handle's stream.
  absl::Status Forward(cudnnHandle_t handle, const float* x, float* y) const;
  // dx from dy, given x and y = pool(x) (max pooling routes dy to each window's maximum).
  absl::Status Backward(cudnnHandle_t handle, const float* x, const float* y, const float* dy, float* dx) const;

 private:
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnPoolingDescriptor_t pool_ = nullptr;
};

// Max pooling without the padding counted: cuDNN's deterministic max (one maximum per
// window takes the gradient); average with or without the padding in the count.
inline cudnnPoolingMode_t MaxPoolMode() { return CUDNN_POOLING_MAX_DETERMINISTIC; }
inline cudnnPoolingMode_t AveragePoolMode(bool count_include_pad) {
  return count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
}

}  // namespace tandem::cuda
