// Pad on the GPU: each output element finds its source per dim with the CPU's
// PadSourceIndex (ops/pad_geometry.h, compiled here as device code).
#include <cuda_runtime.h>

#include "ops/pad_geometry.h"
#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

__global__ void PadKernel(const float* x, float* y, int64_t n, PadIndex ix) {
  const PadMode mode = static_cast<PadMode>(ix.mode);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rest = i, at = 0, stride = 1;
    bool constant = false;
    for (int d = ix.rank - 1; d >= 0; --d) {
      const int64_t o = rest % ix.out[d];
      rest /= ix.out[d];
      const int64_t s = PadSourceIndex(o, ix.before[d], ix.in[d], mode);
      constant = constant || s < 0;
      at += s * stride;
      stride *= ix.in[d];
    }
    y[i] = constant ? ix.value : x[at];
  }
}

}  // namespace

cudaError_t LaunchPad(const float* x, float* y, int64_t n, const PadIndex& index, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  PadKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n, index);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
