// Gather along one axis on the GPU: y[o, j..., k] = x[o, indices[j...], k], indices int64
// or int32, negative ones counted from the end. An index out of range writes NaN (the CPU
// refuses it by name; checking here would cost a read-back per call). GatherGrad adds dY
// back at the indices (atomically; one out of range adds nothing).
#include <cuda_runtime.h>

#include <cmath>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

template <typename I>
__global__ void GatherKernel(const float* x, const I* indices, float* y, int64_t n, int64_t count, int64_t axis_len,
                             int64_t inner) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i % inner, j = (i / inner) % count, o = i / (inner * count);
    int64_t at = static_cast<int64_t>(indices[j]);
    if (at < 0) at += axis_len;
    y[i] = at < 0 || at >= axis_len ? NAN : x[(o * axis_len + at) * inner + k];
  }
}

template <typename I>
__global__ void GatherGradKernel(const float* dy, const I* indices, float* dx, int64_t n, int64_t count,
                                 int64_t axis_len, int64_t inner) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = i % inner, j = (i / inner) % count, o = i / (inner * count);
    int64_t at = static_cast<int64_t>(indices[j]);
    if (at < 0) at += axis_len;
    if (at >= 0 && at < axis_len) atomicAdd(dx + (o * axis_len + at) * inner + k, dy[i]);
  }
}

}  // namespace

cudaError_t LaunchGatherGrad(const float* dy, const void* indices, bool int64_indices, float* dx, int64_t dx_numel,
                             int64_t n, int64_t count, int64_t axis_len, int64_t inner, cudaStream_t stream) {
  if (dx_numel > 0) {
    const cudaError_t e = cudaMemsetAsync(dx, 0, dx_numel * sizeof(float), stream);
    if (e != cudaSuccess) return e;
  }
  if (n == 0) return cudaSuccess;
  if (int64_indices)
    GatherGradKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, static_cast<const int64_t*>(indices), dx, n, count,
                                                         axis_len, inner);
  else
    GatherGradKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, static_cast<const int32_t*>(indices), dx, n, count,
                                                         axis_len, inner);
  return cudaGetLastError();
}

cudaError_t LaunchGather(const float* x, const void* indices, bool int64_indices, float* y, int64_t n, int64_t count,
                         int64_t axis_len, int64_t inner, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (int64_indices)
    GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(x, static_cast<const int64_t*>(indices), y, n, count, axis_len, inner);
  else
    GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(x, static_cast<const int32_t*>(indices), y, n, count, axis_len, inner);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
