// LayerNormalization and its gradient on the GPU: one block per row of `inner` elements
// (block-wide sums in double, two passes for the variance as the CPU's reference), and
// the scale/bias gradients as column sums over the rows: one thread per column and part
// of the rows, then the parts added in order (deterministic).
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

// Part p (blockIdx.y) of the column sums dscale[j] = sum_r dy * xhat, dbias[j] = sum_r dy
// over rows [p * chunk, (p + 1) * chunk), into partial[(2 p) * inner + j] and
// partial[(2 p + 1) * inner + j]. The statistics are the float values saved above, which
// differ from the double ones by an ulp.
__global__ void LayerNormGradColumnPartsKernel(const float* dy, const float* x, const float* row_mean,
                                               const float* row_inv, double* partial, int64_t rows, int64_t inner,
                                               int64_t chunk) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= inner) return;
  const int64_t p = blockIdx.y, begin = p * chunk, end = begin + chunk < rows ? begin + chunk : rows;
  double ds = 0, db = 0;
  for (int64_t r = begin; r < end; ++r) {
    const double g = dy[r * inner + j];
    ds += g * (x[r * inner + j] - static_cast<double>(row_mean[r])) * row_inv[r];
    db += g;
  }
  partial[(2 * p) * inner + j] = ds;
  partial[(2 * p + 1) * inner + j] = db;
}

__global__ void LayerNormGradColumnSumKernel(const double* partial, float* dscale, float* dbias, int64_t inner,
                                             int64_t parts) {
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < inner; j += int64_t(gridDim.x) * blockDim.x) {
    double ds = 0, db = 0;
    for (int64_t p = 0; p < parts; ++p) {
      ds += partial[(2 * p) * inner + j];
      db += partial[(2 * p + 1) * inner + j];
    }
    if (dscale) dscale[j] = static_cast<float>(ds);
    if (dbias) dbias[j] = static_cast<float>(db);
  }
}

int RowBlocks(int64_t rows) { return static_cast<int>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks); }

// Row parts of the column sums: enough blocks to fill the GPU, at least 64 rows a part.
int64_t ColumnParts(int64_t rows, int64_t inner) {
  const int64_t column_blocks = (inner + kRowThreads - 1) / kRowThreads;
  int64_t parts = 1024 / column_blocks;
  if (parts > rows / 64) parts = rows / 64;
  if (parts > 65535) parts = 65535;
  return parts < 1 ? 1 : parts;
}

}  // namespace

cudaError_t LaunchLayerNorm(const float* x, const float* scale, const float* bias, float* y, float* mean,
                            float* inv_std, int64_t rows, int64_t inner, float epsilon, cudaStream_t stream) {
  if (rows == 0 || inner == 0) return cudaSuccess;
  LayerNormKernel<<<RowBlocks(rows), kRowThreads, 0, stream>>>(x, scale, bias, y, mean, inv_std, rows, inner,
                                                               epsilon);
  return cudaGetLastError();
}

int64_t LayerNormGradScratchDoubles(int64_t rows, int64_t inner) { return 2 * ColumnParts(rows, inner) * inner; }

cudaError_t LaunchLayerNormGrad(const float* dy, const float* x, const float* scale, float* dx, float* dscale,
                                float* dbias, float* row_mean, float* row_inv_std, double* partial, int64_t rows,
                                int64_t inner, float epsilon, cudaStream_t stream) {
  if (inner == 0) return cudaSuccess;
  if (rows > 0)
    LayerNormGradRowsKernel<<<RowBlocks(rows), kRowThreads, 0, stream>>>(dy, x, scale, dx, row_mean, row_inv_std,
                                                                         rows, inner, epsilon);
  if (dscale || dbias) {
    const int64_t parts = ColumnParts(rows, inner), chunk = (rows + parts - 1) / parts;
    const dim3 grid(static_cast<unsigned>((inner + kRowThreads - 1) / kRowThreads), static_cast<unsigned>(parts));
    LayerNormGradColumnPartsKernel<<<grid, kRowThreads, 0, stream>>>(dy, x, row_mean, row_inv_std, partial, rows,
                                                                     inner, chunk);
    const int blocks = static_cast<int>((inner + kRowThreads - 1) / kRowThreads);
    LayerNormGradColumnSumKernel<<<blocks, kRowThreads, 0, stream>>>(partial, dscale, dbias, inner, parts);
  }
  return cudaGetLastError();
}

}  // namespace tandem::cuda
