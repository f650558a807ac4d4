// Elementwise kernels over element types other than float32: Cast, comparisons, boolean
// logic, Where. Grid-stride loops, 64-bit indices; each launcher dispatches the element
// type to a template instance.
#include <cuda_runtime.h>

#include "ops/cast_element.h"
#include "providers/cuda/kernels/grid.cuh"
#include "providers/cuda/kernels/strided_offsets.cuh"
#include "providers/cuda/kernels/typed_launch.h"

namespace tandem::cuda {
namespace {

template <typename To, typename From>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = CastElement<To, From>(x[i]);
}

template <typename T>
__device__ __forceinline__ bool Compare(CompareOp op, T a, T b) {
  switch (op) {
    case CompareOp::kEqual: return a == b;
    case CompareOp::kLess: return a < b;
    case CompareOp::kGreater: return a > b;
    case CompareOp::kLessOrEqual: return a <= b;
    case CompareOp::kGreaterOrEqual: return a >= b;
    case CompareOp::kAnd: return a && b;
    case CompareOp::kOr: return a || b;
    case CompareOp::kXor: return bool(a) != bool(b);
  }
  return false;
}

template <typename T>
__global__ void CompareKernel(CompareOp op, const T* a, const T* b, bool* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = Compare(op, a[i], b[i]);
}

template <typename T>
__global__ void CompareBroadcastKernel(CompareOp op, const T* a, const T* b, bool* y, int64_t n, StridedIndex ix) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t oa, ob;
    Offsets(ix, i, &oa, &ob);
    y[i] = Compare(op, a[oa], b[ob]);
  }
}

__global__ void NotKernel(const bool* x, bool* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = !x[i];
}

// T: an unsigned integer of the element's width (Where only moves bits).
template <typename T>
__global__ void WhereKernel(const bool* cond, const T* x, const T* y, T* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = cond[i] ? x[i] : y[i];
}

template <typename T>
__global__ void WhereBroadcastKernel(const bool* cond, const T* x, const T* y, T* out, int64_t n, StridedIndex xy,
                                     StridedIndex c) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t ox, oy, oc, unused;
    Offsets(xy, i, &ox, &oy);
    Offsets(c, i, &oc, &unused);
    out[i] = cond[oc] ? x[ox] : y[oy];
  }
}

// Calls f(T{}) with T the C++ type of `t`.
template <typename F>
cudaError_t WithType(ElementType t, F&& f) {
  switch (t) {
    case ElementType::kFloat: return f(float{});
    case ElementType::kDouble: return f(double{});
    case ElementType::kInt8: return f(int8_t{});
    case ElementType::kUint8: return f(uint8_t{});
    case ElementType::kInt32: return f(int32_t{});
    case ElementType::kInt64: return f(int64_t{});
    case ElementType::kBool: return f(bool{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t LaunchCast(ElementType from, const void* x, ElementType to, void* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return WithType(from, [&](auto f) {
    using From = decltype(f);
    return WithType(to, [&](auto t) {
      using To = decltype(t);
      CastKernel<To, From><<<Blocks(n), kThreads, 0, s>>>(static_cast<const From*>(x), static_cast<To*>(y), n);
      return cudaGetLastError();
    });
  });
}

cudaError_t LaunchCompare(CompareOp op, ElementType type, const void* a, const void* b, bool* y, int64_t n,
                          const StridedIndex* index, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  return WithType(type, [&](auto v) {
    using T = decltype(v);
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    if (index) CompareBroadcastKernel<T><<<Blocks(n), kThreads, 0, s>>>(op, pa, pb, y, n, *index);
    else CompareKernel<T><<<Blocks(n), kThreads, 0, s>>>(op, pa, pb, y, n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchNot(const bool* x, bool* y, int64_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  NotKernel<<<Blocks(n), kThreads, 0, s>>>(x, y, n);
  return cudaGetLastError();
}

namespace {
template <typename T>
cudaError_t LaunchWhereOf(const bool* cond, const void* x, const void* y, void* out, int64_t n,
                          const StridedIndex* xy, const StridedIndex* c, cudaStream_t s) {
  const T* px = static_cast<const T*>(x);
  const T* py = static_cast<const T*>(y);
  T* po = static_cast<T*>(out);
  if (xy && c) WhereBroadcastKernel<T><<<Blocks(n), kThreads, 0, s>>>(cond, px, py, po, n, *xy, *c);
  else WhereKernel<T><<<Blocks(n), kThreads, 0, s>>>(cond, px, py, po, n);
  return cudaGetLastError();
}
}  // namespace

cudaError_t LaunchWhere(const bool* cond, const void* x, const void* y, void* out, int element_bytes, int64_t n,
                        const StridedIndex* xy, const StridedIndex* c, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1: return LaunchWhereOf<uint8_t>(cond, x, y, out, n, xy, c, s);
    case 2: return LaunchWhereOf<uint16_t>(cond, x, y, out, n, xy, c, s);
    case 4: return LaunchWhereOf<uint32_t>(cond, x, y, out, n, xy, c, s);
    case 8: return LaunchWhereOf<uint64_t>(cond, x, y, out, n, xy, c, s);
  }
  return cudaErrorInvalidValue;
}

}  // namespace tandem::cuda
