// Fused optimizer updates (one launch per parameter tensor), with the formulas of providers/cpu/kernels/optimizer_ops.cc (torch.optim).
#include <cuda_runtime.h>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

__global__ void AdamKernel(float* p, const float* g, float* m1, float* m2, int64_t n, AdamParams k) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    float d = g[i];
    float pv = p[i];
    if (k.mode == 2) pv *= k.shrink;
    if (k.mode == 1) d += k.wd * pv;
    const float m = m1[i] + k.b1c * (d - m1[i]);
    const float v = k.b2 * m2[i] + k.b2c * d * d;
    m1[i] = m;
    m2[i] = v;
    const float denom = sqrtf(v) / k.bc2_sqrt + k.eps;
    p[i] = pv - k.step_size * (m / denom);
  }
}

__global__ void SgdKernel(float* p, const float* g, float* buf, int64_t n, float lr, float wd,
                          float mu, float damp, bool first, bool nesterov) {
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

cudaError_t LaunchAdam(float* p, const float* g, float* m, float* v, int64_t n, const AdamParams& k,
                       cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  AdamKernel<<<Blocks(n), kThreads, 0, s>>>(p, g, m, v, n, k);
  return cudaGetLastError();
}

cudaError_t LaunchSgd(float* p, const float* g, float* velocity, int64_t n, float lr, float wd,
                      float momentum, float damp, bool first_step, bool nesterov, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  SgdKernel<<<Blocks(n), kThreads, 0, s>>>(p, g, velocity, n, lr, wd, momentum, damp, first_step, nesterov);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
