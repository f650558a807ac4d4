// The parts of BatchNormalization cuDNN does not do as ONNX (and the CPU provider) defines
// them: the running statistics from the batch's (biased) variance, and the gradient when
// the statistics are the given constants (training_mode = 0). One block per channel,
// sums in double, a fixed order.
#include <cuda_runtime.h>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

__global__ void RunningStatsKernel(BatchNormStats s) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < s.channels; c += int64_t(gridDim.x) * blockDim.x) {
    const double inv = s.save_inv_std[c];
    const double mean = s.save_mean[c];
    // cuDNN's saved 1 / sqrt(var + eps); the subtraction may dip below 0 for a constant channel
    const double var = fmax(1.0 / (inv * inv) - s.epsilon, 0.0);
    if (s.running_mean) s.running_mean[c] = static_cast<float>(s.input_mean[c] * s.momentum + mean * (1 - s.momentum));
    if (s.running_var) s.running_var[c] = static_cast<float>(s.input_var[c] * s.momentum + var * (1 - s.momentum));
    if (s.batch_mean) s.batch_mean[c] = static_cast<float>(mean);
    if (s.batch_var) s.batch_var[c] = static_cast<float>(var);
  }
}

// Sums two doubles over the block; the totals end in a[0], b[0].
__device__ void BlockSum2(double* a, double* b) {
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      a[threadIdx.x] += a[threadIdx.x + stride];
      b[threadIdx.x] += b[threadIdx.x + stride];
    }
    __syncthreads();
  }
}

__global__ void ConstantStatsGradKernel(BatchNormConstGrad g) {
  __shared__ double sum_dy[kThreads];
  __shared__ double sum_dy_xc[kThreads];
  const int64_t c = blockIdx.x;
  const double inv = 1.0 / sqrt(static_cast<double>(g.var[c]) + g.epsilon);
  const double mean = g.mean[c];
  double a = 0, b = 0;
  for (int64_t i = threadIdx.x; i < g.n * g.s; i += blockDim.x) {
    const int64_t at = ((i / g.s) * g.channels + c) * g.s + i % g.s;
    a += g.dy[at];
    b += g.dy[at] * (g.x[at] - mean);
    if (g.dx) g.dx[at] = static_cast<float>(g.dy[at] * g.scale[c] * inv);
  }
  sum_dy[threadIdx.x] = a;
  sum_dy_xc[threadIdx.x] = b;
  __syncthreads();
  BlockSum2(sum_dy, sum_dy_xc);
  if (threadIdx.x == 0) {
    if (g.dscale) g.dscale[c] = static_cast<float>(sum_dy_xc[0] * inv);
    if (g.dbias) g.dbias[c] = static_cast<float>(sum_dy[0]);
  }
}

}  // namespace

cudaError_t LaunchBatchNormStats(const BatchNormStats& s, cudaStream_t stream) {
  if (s.channels == 0) return cudaSuccess;
  RunningStatsKernel<<<Blocks(s.channels), kThreads, 0, stream>>>(s);
  return cudaGetLastError();
}

cudaError_t LaunchBatchNormConstGrad(const BatchNormConstGrad& g, cudaStream_t stream) {
  if (g.channels == 0) return cudaSuccess;
  ConstantStatsGradKernel<<<static_cast<unsigned>(g.channels), kThreads, 0, stream>>>(g);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
