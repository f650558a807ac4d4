// Sum reductions over any set of dims (ReduceSum/ReduceMean, SumToShape, bias
// gradients): one block per output element when the reduced extent is long, one thread
// per output element otherwise; when few outputs reduce long extents (a bias gradient
// over 40,000 rows, a loss), each extent is split into parts summed by their own blocks
// and then added up in a fixed order (two launches, same result every run). Accumulates
// in double, like the CPU's long reductions.
#include <cuda_runtime.h>

#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {
namespace {

// Kept dims (the output) and reduced dims (the inner loop), each with x's strides.
struct Split {
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank], kept_strides[kMaxRank];
  int64_t red_dims[kMaxRank], red_strides[kMaxRank];
  int64_t out_count = 1, red_count = 1;
};

__device__ __forceinline__ int64_t Offset(int64_t i, int rank, const int64_t* dims, const int64_t* strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return off;
}

__global__ void ReduceThreadPerOutput(const float* x, float* y, Split s, float scale) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < s.out_count;
       o += int64_t(gridDim.x) * blockDim.x) {
    const int64_t base = Offset(o, s.kept_rank, s.kept_dims, s.kept_strides);
    double acc = 0;
    for (int64_t r = 0; r < s.red_count; ++r) acc += x[base + Offset(r, s.red_rank, s.red_dims, s.red_strides)];
    y[o] = static_cast<float>(acc * scale);
  }
}

__global__ void ReduceBlockPerOutput(const float* x, float* y, Split s, float scale) {
  __shared__ double partial[kThreads];
  for (int64_t o = blockIdx.x; o < s.out_count; o += gridDim.x) {
    const int64_t base = Offset(o, s.kept_rank, s.kept_dims, s.kept_strides);
    double acc = 0;
    for (int64_t r = threadIdx.x; r < s.red_count; r += blockDim.x)
      acc += x[base + Offset(r, s.red_rank, s.red_dims, s.red_strides)];
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) y[o] = static_cast<float>(partial[0] * scale);
    __syncthreads();
  }
}

// Part p of output o's reduced extent (elements [p * chunk, (p + 1) * chunk)) per block.
__global__ void ReducePartPerBlock(const float* x, double* partial, Split s, int64_t parts, int64_t chunk) {
  __shared__ double sums[kThreads];
  for (int64_t b = blockIdx.x; b < s.out_count * parts; b += gridDim.x) {
    const int64_t o = b / parts, p = b % parts;
    const int64_t base = Offset(o, s.kept_rank, s.kept_dims, s.kept_strides);
    const int64_t end = (p + 1) * chunk < s.red_count ? (p + 1) * chunk : s.red_count;
    double acc = 0;
    for (int64_t r = p * chunk + threadIdx.x; r < end; r += blockDim.x)
      acc += x[base + Offset(r, s.red_rank, s.red_dims, s.red_strides)];
    sums[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
      if (threadIdx.x < w) sums[threadIdx.x] += sums[threadIdx.x + w];
      __syncthreads();
    }
    if (threadIdx.x == 0) partial[b] = sums[0];
    __syncthreads();
  }
}

__global__ void SumParts(const double* partial, float* y, int64_t out_count, int64_t parts, float scale) {
  for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < out_count; o += int64_t(gridDim.x) * blockDim.x) {
    double acc = 0;
    for (int64_t p = 0; p < parts; ++p) acc += partial[o * parts + p];
    y[o] = static_cast<float>(acc * scale);
  }
}

constexpr int64_t kTargetBlocks = 1024;  // enough to fill an H100's 132 SMs several times
constexpr int64_t kMinPart = 2048;       // elements a part sums at least

int64_t Parts(int64_t out_count, int64_t red_count) {
  if (out_count == 0 || out_count >= kTargetBlocks || red_count < 2 * kMinPart) return 1;
  const int64_t by_blocks = kTargetBlocks / out_count, by_size = red_count / kMinPart;
  return by_blocks < by_size ? by_blocks : by_size;
}

int64_t Count(const ReduceGeometry& g, bool reduced) {
  int64_t n = 1;
  for (int d = 0; d < g.rank; ++d)
    if (g.reduced[d] == reduced) n *= g.dims[d];
  return n;
}

}  // namespace

size_t ReduceScratchBytes(const ReduceGeometry& g) {
  const int64_t out = Count(g, false), parts = Parts(out, Count(g, true));
  return parts > 1 ? static_cast<size_t>(out * parts) * sizeof(double) : 0;
}

cudaError_t LaunchReduceSum(const float* x, float* y, const ReduceGeometry& g, float scale, double* scratch,
                            cudaStream_t stream) {
  Split s;
  int64_t stride = 1;
  int64_t strides[kMaxRank];
  for (int d = g.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= g.dims[d];
  }
  for (int d = 0; d < g.rank; ++d) {
    if (g.reduced[d]) {
      s.red_dims[s.red_rank] = g.dims[d];
      s.red_strides[s.red_rank++] = strides[d];
      s.red_count *= g.dims[d];
    } else {
      s.kept_dims[s.kept_rank] = g.dims[d];
      s.kept_strides[s.kept_rank++] = strides[d];
      s.out_count *= g.dims[d];
    }
  }
  if (s.out_count == 0) return cudaSuccess;
  const int64_t parts = Parts(s.out_count, s.red_count);
  if (parts > 1) {
    if (!scratch) return cudaErrorInvalidValue;
    const int64_t chunk = (s.red_count + parts - 1) / parts;
    const int64_t blocks = s.out_count * parts;
    ReducePartPerBlock<<<static_cast<int>(blocks < 65535 ? blocks : 65535), kThreads, 0, stream>>>(x, scratch, s,
                                                                                                   parts, chunk);
    SumParts<<<Blocks(s.out_count), kThreads, 0, stream>>>(scratch, y, s.out_count, parts, scale);
  } else if (s.red_count >= 1024 || s.out_count < 1024) {
    const int64_t blocks = s.out_count < 65535 ? s.out_count : 65535;
    ReduceBlockPerOutput<<<static_cast<int>(blocks), kThreads, 0, stream>>>(x, y, s, scale);
  } else {
    const int64_t blocks = (s.out_count + kThreads - 1) / kThreads;
    ReduceThreadPerOutput<<<static_cast<int>(blocks < 65535 ? blocks : 65535), kThreads, 0, stream>>>(
        x, y, s, scale);
  }
  return cudaGetLastError();
}

}  // namespace tandem::cuda
