// LayerNormalization and its gradient on the GPU: one block per row of `inner` elements
// (block-wide sums in double, two passes for the variance as the CPU's reference), and
// the scale/bias gradients as column sums over the rows, one thread per column.
#include <cuda_runtime.h>

#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr int kMaxRowBlocks = 65535;

// The sum of v over the block (every thread gets it). `shared` holds 33 doubles.
__device__ double BlockSum(double v, double* shared) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // the previous call's readers are done with shared
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (blockDim.x >> 5) ? shared[lane] : 0.0;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) shared[32] = v;
  }
  __syncthreads();
  return shared[32];
}

// Mean and 1 / sqrt(var + eps) of row r.
__device__ void RowStats(const float* xr, int64_t inner, float epsilon, double* shared, double* mean, double* inv) {
  double s = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) s += xr[j];
  const double m = BlockSum(s, shared) / inner;
  double q = 0;
  for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
    const double d = xr[j] - m;
    q += d * d;
  }
  *mean = m;
  *inv = 1.0 / sqrt(BlockSum(q, shared) / inner + epsilon);
}

__global__ void LayerNormKernel(const float* x, const float* scale, const float* bias, float* y, float* mean_out,
                                float* inv_out, int64_t rows, int64_t inner, float epsilon) {
  __shared__ double shared[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * inner;
    double mean, inv;
    RowStats(xr, inner, epsilon, shared, &mean, &inv);
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x)
      y[r * inner + j] = static_cast<float>((xr[j] - mean) * inv * scale[j] + (bias ? bias[j] : 0.f));
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[r] = static_cast<float>(mean);
      if (inv_out) inv_out[r] = static_cast<float>(inv);
    }
  }
}

// dx = inv * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * scale; saves the stats.
__global__ void LayerNormGradRowsKernel(const float* dy, const float* x, const float* scale, float* dx,
                                        float* row_mean, float* row_inv, int64_t rows, int64_t inner,
                                        float epsilon) {
  __shared__ double shared[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * inner;
    const float* gr = dy + r * inner;
    double mean, inv;
    RowStats(xr, inner, epsilon, shared, &mean, &inv);
    if (threadIdx.x == 0) {
      row_mean[r] = static_cast<float>(mean);
      row_inv[r] = static_cast<float>(inv);
    }
    if (!dx) continue;
    double sg = 0, sgx = 0;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const double g = static_cast<double>(gr[j]) * scale[j];
      sg += g;
      sgx += g * (xr[j] - mean) * inv;
    }
    const double mg = BlockSum(sg, shared) / inner;
    const double mgx = BlockSum(sgx, shared) / inner;
    for (int64_t j = threadIdx.x; j < inner; j += blockDim.x) {
      const double g = static_cast<double>(gr[j]) * scale[j];
      dx[r * inner + j] = static_cast<float>(inv * (g - mg - (xr[j] - mean) * inv * mgx));
    }
  }
}

// dscale[j] = sum_r dy * xhat, dbias[j] = sum_r dy. The statistics are the float values
// saved above, which differ from the double ones by an ulp.
__global__ void LayerNormGradColumnsKernel(const float* dy, const float* x, const float* row_mean,
                                           const float* row_inv, float* dscale, float* dbias, int64_t rows,
                                           int64_t inner) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < inner; j += int64_t(gridDim.x) * blockDim.x) {
    double ds = 0, db = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const double g = dy[r * inner + j];
      ds += g * (x[r * inner + j] - static_cast<double>(row_mean[r])) * row_inv[r];
      db += g;
    }
    if (dscale) dscale[j] = static_cast<float>(ds);
    if (dbias) dbias[j] = static_cast<float>(db);
  }
}

int RowBlocks(int64_t rows) { return static_cast<int>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks); }

}  // namespace

cudaError_t LaunchLayerNorm(const float* x, const float* scale, const float* bias, float* y, float* mean,
                            float* inv_std, int64_t rows, int64_t inner, float epsilon, cudaStream_t stream) {
  if (rows == 0 || inner == 0) return cudaSuccess;
  LayerNormKernel<<<RowBlocks(rows), kRowThreads, 0, stream>>>(x, scale, bias, y, mean, inv_std, rows, inner,
                                                               epsilon);
  return cudaGetLastError();
}

cudaError_t LaunchLayerNormGrad(const float* dy, const float* x, const float* scale, float* dx, float* dscale,
                                float* dbias, float* row_mean, float* row_inv_std, int64_t rows, int64_t inner,
                                float epsilon, cudaStream_t stream) {
  if (inner == 0) return cudaSuccess;
  if (rows > 0)
    LayerNormGradRowsKernel<<<RowBlocks(rows), kRowThreads, 0, stream>>>(dy, x, scale, dx, row_mean, row_inv_std,
                                                                         rows, inner, epsilon);
  if (dscale || dbias) {
    const int blocks = static_cast<int>((inner + kRowThreads - 1) / kRowThreads);
    LayerNormGradColumnsKernel<<<blocks, kRowThreads, 0, stream>>>(dy, x, row_mean, row_inv_std, dscale, dbias,
                                                                   rows, inner);
  }
  return cudaGetLastError();
}

}  // namespace tandem::cuda
