// Training-mode Dropout and its gradient on the GPU, with the shared counter-based masks
// (ops/dropout_mask.h, compiled here as device code): the same seed and
// step draw the same mask on both devices.
#include <cuda_runtime.h>

#include "ops/dropout_mask.h"
#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

__global__ void DropoutKernel(const float* x, float* y, bool* mask, int64_t n, uint64_t seed,
                              const int64_t* device_counter, uint64_t host_counter, const int64_t* device_first_row,
                              int64_t row_elements, float ratio, double scale) {
  const uint64_t counter = device_counter ? static_cast<uint64_t>(*device_counter) : host_counter;
  const uint64_t key = dropout::StreamKey(seed, counter);
  const uint64_t offset = device_first_row ? static_cast<uint64_t>(*device_first_row * row_elements) : 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const bool keep = dropout::Keep(key, offset + static_cast<uint64_t>(i), ratio);
    y[i] = keep ? static_cast<float>(x[i] * scale) : 0.f;
    if (mask) mask[i] = keep;
  }
}

__global__ void DropoutGradKernel(const float* dy, const bool* mask, float* dx, int64_t n, double scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dx[i] = mask[i] ? static_cast<float>(dy[i] * scale) : 0.f;
}

}  // namespace

cudaError_t LaunchDropout(const float* x, float* y, bool* mask, int64_t n, uint64_t seed, const int64_t* device_counter,
                          uint64_t host_counter, const int64_t* device_first_row, int64_t row_elements, float ratio,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const double scale = ratio < 1.f ? 1.0 / (1.0 - ratio) : 0.0;  // as the CPU: in double
  DropoutKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, mask, n, seed, device_counter, host_counter,
                                                    device_first_row, row_elements, ratio, scale);
  return cudaGetLastError();
}

cudaError_t LaunchDropoutGrad(const float* dy, const bool* mask, float* dx, int64_t n, float ratio, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const double scale = ratio < 1.f ? 1.0 / (1.0 - ratio) : 0.0;  // as the CPU: in double
  DropoutGradKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, mask, dx, n, scale);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
