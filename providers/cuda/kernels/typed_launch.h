// Launchers of the elementwise kernels that take element types other than float32: Cast,
// comparisons, boolean logic and Where (typed_elementwise.cu). Same conventions as
// launch.h: enqueued on `stream`, the launch's cudaError_t returned, broadcast dims as
// stride 0 in a StridedIndex (null index: every operand has the output's n elements).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "providers/cuda/kernels/launch.h"

namespace tandem::cuda {

// The element types these kernels read and write (bool is one byte, 0 or 1).
enum class ElementType { kFloat, kDouble, kInt8, kUint8, kInt32, kInt64, kBool };

// y = x converted to `to` as the CPU's Cast does (ops/cast_element.h).
cudaError_t LaunchCast(ElementType from, const void* x, ElementType to, void* y, int64_t n, cudaStream_t stream);

// y = a op b as bool. kAnd/kOr/kXor take bool operands, the comparisons operands of
// `type` (NaN compares unequal and unordered, as in C++).
enum class CompareOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor };
cudaError_t LaunchCompare(CompareOp op, ElementType type, const void* a, const void* b, bool* y, int64_t n,
                          const StridedIndex* index, cudaStream_t stream);

// y = !x.
cudaError_t LaunchNot(const bool* x, bool* y, int64_t n, cudaStream_t stream);

// out = cond ? x : y over elements of `element_bytes` (1, 2, 4 or 8) bytes. `xy`: the
// output dims with x's strides (stride_a) and y's (stride_b); `c`: cond's (stride_a).
// Both null: no broadcasting.
cudaError_t LaunchWhere(const bool* cond, const void* x, const void* y, void* out, int element_bytes, int64_t n,
                        const StridedIndex* xy, const StridedIndex* c, cudaStream_t stream);

}  // namespace tandem::cuda
