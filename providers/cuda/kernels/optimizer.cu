// Fused optimizer updates (one launch per parameter tensor), with the formulas of providers/cpu/kernels/training/optimizer_ops.cc (torch.optim).
#include <cuda_runtime.h>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

__global__ void AdamKernel(float* p, const float* g, float* m1, float* m2, int64_t n, const int64_t* step_in,
                           const float* lr_in, AdamParams k) {
  __shared__ float step_size, bc2_sqrt, shrink;  // the CPU's constants, from this step's values
  if (threadIdx.x == 0) {
    const double step = static_cast<double>(*step_in), lr = static_cast<double>(*lr_in);
    step_size = static_cast<float>(lr / (1.0 - pow(k.beta1, step)));
    bc2_sqrt = static_cast<float>(sqrt(1.0 - pow(k.beta2, step)));
    shrink = static_cast<float>(1.0 - lr * k.weight_decay);
  }
  __syncthreads();
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float d = g[i];
    float pv = p[i];
    if (k.mode == 2) pv *= shrink;
    if (k.mode == 1) d += k.wd * pv;
    const float m = m1[i] + k.b1c * (d - m1[i]);
    const float v = k.b2 * m2[i] + k.b2c * d * d;
    m1[i] = m;
    m2[i] = v;
    const float denom = sqrtf(v) / bc2_sqrt + k.eps;
    p[i] = pv - step_size * (m / denom);
  }
}

__global__ void SgdKernel(float* p, const float* g, float* buf, int64_t n, const int64_t* step, const float* lr_in,
                          float wd, float mu, float damp, bool nesterov) {
  const bool first = *step == 1;
  const float lr = *lr_in;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float d = g[i];
    if (wd != 0.f) d += wd * p[i];
    if (buf) {
      const float b = first ? d : mu * buf[i] + damp * d;
      buf[i] = b;
      d = nesterov ? d + mu * b : b;
    }
    p[i] -= lr * d;
  }
}

}  // namespace

cudaError_t LaunchAdam(float* p, const float* g, float* m, float* v, int64_t n, const int64_t* step, const float* lr,
                       const AdamParams& k, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  AdamKernel<<<Blocks(n), kThreads, 0, s>>>(p, g, m, v, n, step, lr, k);
  return cudaGetLastError();
}

cudaError_t LaunchSgd(float* p, const float* g, float* velocity, int64_t n, const int64_t* step, const float* lr,
                      float wd, float momentum, float damp, bool nesterov, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  SgdKernel<<<Blocks(n), kThreads, 0, s>>>(p, g, velocity, n, step, lr, wd, momentum, damp, nesterov);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
