// Sum reductions over any set of dims (ReduceSum/ReduceMean, SumToShape, bias
// gradients): one block per output element when the reduced extent is long, one thread
// per output element otherwise. Accumulates in double, like the CPU's long reductions.
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

}  // namespace

cudaError_t LaunchReduceSum(const float* x, float* y, const ReduceGeometry& g, float scale,
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
  if (s.red_count >= 1024 || s.out_count < 1024) {
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
