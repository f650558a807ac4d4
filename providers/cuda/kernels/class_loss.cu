// Cross-entropy over classes on the GPU: ONNX SoftmaxCrossEntropyLoss and
// NegativeLogLikelihoodLoss and their ai.tandem gradients (formulas and normalisation
// as providers/cpu/kernels/nn/loss.cc and loss_grad_ops.cc). One thread per row (n * d rows
// of c classes, strided by d); the log-sum-exp and the sums in double; the reduction one
// block in a fixed order, so results do not depend on scheduling.
#include <cuda_runtime.h>

#include <cmath>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

// The label's weight for row r (0 when ignored), or -1 for a label out of range.
__device__ __forceinline__ double RowWeight(const ClassLossArgs& a, int64_t t) {
  if (a.has_ignore && t == a.ignore_index) return 0.0;
  if (t < 0 || t >= a.c) return -1.0;
  return a.weight ? static_cast<double>(a.weight[t]) : 1.0;
}

// log(sum_k exp(x_k)) of row (i, j), stably.
__device__ __forceinline__ double LogSumExp(const float* base, int64_t c, int64_t d) {
  double mx = -INFINITY;
  for (int64_t k = 0; k < c; ++k) mx = fmax(mx, static_cast<double>(base[k * d]));
  if (isinf(mx)) return mx;
  double s = 0;
  for (int64_t k = 0; k < c; ++k) s += exp(static_cast<double>(base[k * d]) - mx);
  return mx + log(s);
}

__global__ void RowsKernel(ClassLossArgs a, float* loss_row, float* weight_row, float* log_prob) {
  const int64_t rows = a.n * a.d;
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = r / a.d, j = r % a.d;
    const float* base = a.x + i * a.c * a.d + j;
    const double lse = a.log_probs_given ? 0.0 : LogSumExp(base, a.c, a.d);
    if (log_prob)
      for (int64_t k = 0; k < a.c; ++k) log_prob[i * a.c * a.d + j + k * a.d] = static_cast<float>(base[k * a.d] - lse);
    const int64_t t = a.labels[r];
    const double w = RowWeight(a, t);
    if (weight_row) weight_row[r] = static_cast<float>(w < 0 ? 0.0 : w);
    if (loss_row)  // a label out of range makes the loss NaN (the CPU refuses it by name)
      loss_row[r] = w < 0 ? NAN : (w == 0 ? 0.f : static_cast<float>(-(base[t * a.d] - lse) * w));
  }
}

// out[0] = sum of v (times 1 / denom): one block, a fixed order.
__global__ void SumKernel(const float* v, int64_t n, const float* denom_values, double denom, float* out) {
  __shared__ double partial[kThreads];
  __shared__ double partial_denom[kThreads];
  double acc = 0, acc_denom = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    acc += v[i];
    if (denom_values) acc_denom += denom_values[i];
  }
  partial[threadIdx.x] = acc;
  partial_denom[threadIdx.x] = acc_denom;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      partial[threadIdx.x] += partial[threadIdx.x + stride];
      partial_denom[threadIdx.x] += partial_denom[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = static_cast<float>(partial[0] / (denom_values ? partial_denom[0] : denom));
}

__global__ void GradKernel(ClassLossArgs a, const float* dy, bool dy_per_row, const float* denom_device,
                           double denom, const float* dlogp, float* dx) {
  const int64_t rows = a.n * a.d;
  const double scale_all = dy_per_row ? 0.0 : dy[0] / (denom_device ? static_cast<double>(denom_device[0]) : denom);
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = r / a.d, j = r % a.d;
    const int64_t base_index = i * a.c * a.d + j;
    const float* base = a.x + base_index;
    float* out = dx + base_index;
    const int64_t t = a.labels[r];
    const double w = RowWeight(a, t);
    const double scale = (dy_per_row ? dy[r] : scale_all) * (w < 0 ? NAN : w);
    if (a.log_probs_given) {  // NegativeLogLikelihoodLossGrad: -onehot * w[t] * dY'
      for (int64_t k = 0; k < a.c; ++k) out[k * a.d] = 0.f;
      if (w != 0 && t >= 0 && t < a.c) out[t * a.d] = static_cast<float>(-scale);
      continue;
    }
    const double lse = LogSumExp(base, a.c, a.d);
    double gs = 0;  // sum of dLogProb over the row
    if (dlogp)
      for (int64_t k = 0; k < a.c; ++k) gs += dlogp[base_index + k * a.d];
    for (int64_t k = 0; k < a.c; ++k) {
      const double sm = exp(static_cast<double>(base[k * a.d]) - lse);
      double g = sm * scale - (k == t ? scale : 0.0);
      if (dlogp) g += dlogp[base_index + k * a.d] - sm * gs;
      out[k * a.d] = static_cast<float>(g);
    }
  }
}

}  // namespace

cudaError_t LaunchClassLossRows(const ClassLossArgs& a, float* loss_row, float* weight_row, float* log_prob,
                                cudaStream_t stream) {
  const int64_t rows = a.n * a.d;
  if (rows == 0) return cudaSuccess;
  RowsKernel<<<Blocks(rows), kThreads, 0, stream>>>(a, loss_row, weight_row, log_prob);
  return cudaGetLastError();
}

cudaError_t LaunchSumDivided(const float* v, int64_t n, const float* denom_values, double denom, float* out,
                             cudaStream_t stream) {
  SumKernel<<<1, kThreads, 0, stream>>>(v, n, denom_values, denom, out);
  return cudaGetLastError();
}

cudaError_t LaunchClassLossGrad(const ClassLossArgs& a, const float* dy, bool dy_per_row, const float* denom_device,
                                double denom, const float* dlogp, float* dx, cudaStream_t stream) {
  const int64_t rows = a.n * a.d;
  if (rows == 0) return cudaSuccess;
  GradKernel<<<Blocks(rows), kThreads, 0, stream>>>(a, dy, dy_per_row, denom_device, denom, dlogp, dx);
  return cudaGetLastError();
}

}  // namespace tandem::cuda
