// The arguments of the gradients' all-reduce nodes (training/gradient_all_reduce.h),
// checked and unpacked alike by every provider's kernels (providers/cpu/kernels/training/all_reduce.cc,
// providers/cuda/kernels/all_reduce_ops.cc):
//   AllReduceStart(g_1..g_N, scale) -> packed   packed = [scale * g_1, ..., scale * g_N]
//   AllReduceWait(packed, g_1..g_N) -> r_1..r_N  r_i: views of the summed `packed`
#pragma once
#include <cstdint>

#include "absl/status/statusor.h"
#include "framework/kernel.h"

namespace tandem {

// AllReduceStart's inputs: the number of float32 values of its N gradients (inputs
// 0..N-1, N = num_inputs - 1), which `packed` holds; an error naming what is wrong.
absl::StatusOr<int64_t> StartBucketFloats(const KernelContext& ctx);
// AllReduceWait's inputs: the same count for its gradients (inputs 1..N), after checking
// that `packed` (input 0) is a float32 vector of exactly that many values.
absl::StatusOr<int64_t> WaitBucketFloats(const KernelContext& ctx);
// AllReduceWait's outputs: r_i = the slice of `packed` (input 0) that g_i (input 1 + i)
// was packed into, shaped like g_i. No copies.
void SetBucketViews(KernelContext& ctx);

}  // namespace tandem
