// Elementwise kernels: unary activations, broadcasting binary ops and their gradients,
// fill, strided copy (Expand/Transpose/Slice) and scatter (SliceGrad), Clip's gradient,
// accumulate. Grid-stride loops, 64-bit indices.
#include <cuda_runtime.h>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"
#include "providers/cuda/kernels/strided_offsets.cuh"

namespace tandem::cuda {
namespace {

__device__ __forceinline__ float ApplyUnary(UnaryOp op, float x, float alpha, float beta) {
  switch (op) {
    case UnaryOp::kRelu: return x > 0.f ? x : 0.f;
    case UnaryOp::kTanh: return tanhf(x);
    case UnaryOp::kSigmoid: return 1.f / (1.f + expf(-x));
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return fabsf(x);
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kLeakyRelu: return x >= 0.f ? x : alpha * x;
    case UnaryOp::kElu: return x >= 0.f ? x : alpha * (expf(x) - 1.f);
    case UnaryOp::kReciprocal: return 1.f / x;
    case UnaryOp::kScale: return alpha * x;
    case UnaryOp::kClip: return x != x ? x : fminf(fmaxf(x, alpha), beta);
    case UnaryOp::kHardSigmoid: return x != x ? x : fminf(fmaxf(alpha * x + beta, 0.f), 1.f);
    case UnaryOp::kHardSwish: return x * fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
  }
  return x;
}

__device__ __forceinline__ float ApplyBinary(BinaryOp op, float a, float b, float alpha) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
    case BinaryOp::kMax: return (a != a || a > b) ? a : b;  // NaN propagates
    case BinaryOp::kMin: return (a != a || a < b) ? a : b;
    case BinaryOp::kReluGrad: return b > 0.f ? a : 0.f;
    case BinaryOp::kTanhGrad: return a * (1.f - b * b);
    case BinaryOp::kSigmoidGrad: return a * b * (1.f - b);
    case BinaryOp::kLeakyReluGrad: return b > 0.f ? a : alpha * a;
  }
  return a;
}

__global__ void UnaryKernel(UnaryOp op, const float* x, float* y, int64_t n, float alpha, float beta) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = ApplyUnary(op, x[i], alpha, beta);
}

__global__ void BinarySameKernel(BinaryOp op, const float* a, const float* b, float* y, int64_t n,
                                 float alpha) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = ApplyBinary(op, a[i], b[i], alpha);
}

__global__ void BinaryBroadcastKernel(BinaryOp op, const float* a, const float* b, float* y, int64_t n,
                                      StridedIndex ix, float alpha) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    Offsets(ix, i, &oa, &ob);
    y[i] = ApplyBinary(op, a[oa], b[ob], alpha);
  }
}

__global__ void FillKernel(float* y, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = v;
}

__global__ void StridedCopyKernel(const float* x, float* y, int64_t n, StridedIndex ix) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    Offsets(ix, i, &oa, &ob);
    y[i] = x[oa];
  }
}

__global__ void StridedScatterKernel(const float* x, float* y, int64_t n, StridedIndex ix) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    Offsets(ix, i, &oa, &ob);
    y[oa] = x[i];
  }
}

__global__ void ClipGradKernel(const float* dy, const float* x, float* dx, int64_t n, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dx[i] = x[i] < lo || x[i] > hi ? 0.f : dy[i];
}

__global__ void AccumulateKernel(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] += x[i];
}

}  // namespace

cudaError_t LaunchUnary(UnaryOp op, const float* x, float* y, int64_t n, float alpha, cudaStream_t s, float beta) {
  if (n == 0) return cudaSuccess;
  UnaryKernel<<<Blocks(n), kThreads, 0, s>>>(op, x, y, n, alpha, beta);
  return cudaGetLastError();
}

cudaError_t LaunchBinary(BinaryOp op, const float* a, const float* b, float* y, int64_t n,
                         const StridedIndex* index, float alpha, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  if (index) BinaryBroadcastKernel<<<Blocks(n), kThreads, 0, s>>>(op, a, b, y, n, *index, alpha);
  else BinarySameKernel<<<Blocks(n), kThreads, 0, s>>>(op, a, b, y, n, alpha);
  return cudaGetLastError();
}

cudaError_t LaunchFill(float* y, int64_t n, float value, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  FillKernel<<<Blocks(n), kThreads, 0, s>>>(y, n, value);
  return cudaGetLastError();
}

cudaError_t LaunchStridedCopy(const float* x, float* y, int64_t n, const StridedIndex& index,
                              cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  StridedCopyKernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n, index);
  return cudaGetLastError();
}

cudaError_t LaunchStridedScatter(const float* x, float* y, int64_t n, const StridedIndex& index,
                                 cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  StridedScatterKernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n, index);
  return cudaGetLastError();
}

cudaError_t LaunchClipGrad(const float* dy, const float* x, float* dx, int64_t n, float lo, float hi,
                           cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  ClipGradKernel<<<Blocks(n), kThreads, 0, s>>>(dy, x, dx, n, lo, hi);
  return cudaGetLastError();
}

cudaError_t LaunchAccumulate(const float* x, float* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  AccumulateKernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
