#include "framework/all_reduce_bucket.h"

#include <string>

namespace tandem {
namespace {

absl::StatusOr<int64_t> FloatGradients(const KernelContext& ctx, int first, int count) {
  int64_t total = 0;
  for (int i = first; i < first + count; ++i) {
    const Tensor* g = ctx.input(i);
    if (!g || g->dtype() != DataType::kFloat)
      return absl::InvalidArgumentError("gradient input " + std::to_string(i) + " must be float32");
    total += g->numel();
  }
  return total;
}

}  // namespace

absl::StatusOr<int64_t> StartBucketFloats(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  if (n < 1 || ctx.num_outputs() != 1) return absl::InvalidArgumentError("expects N gradients and a scale, and one output");
  return FloatGradients(ctx, 0, n);
}

absl::StatusOr<int64_t> WaitBucketFloats(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  if (n < 1 || ctx.num_outputs() != n)
    return absl::InvalidArgumentError("expects the packed bucket and its N gradients, and N outputs");
  auto total = FloatGradients(ctx, 1, n);
  if (!total.ok()) return total;
  const Tensor* packed = ctx.input(0);
  if (!packed || packed->dtype() != DataType::kFloat || packed->numel() != *total)
    return absl::InvalidArgumentError("the packed bucket must hold the " + std::to_string(*total) +
                                      " floats of its gradients");
  return total;
}

void SetBucketViews(KernelContext& ctx) {
  const Tensor& packed = *ctx.input(0);
  int64_t at = 0;
  for (int i = 0; i + 1 < ctx.num_inputs(); ++i) {
    const Tensor& g = *ctx.input(1 + i);
    ctx.SetOutput(i, packed.Rows(at, at + g.numel()).Reshaped(g.dims()));
    at += g.numel();
  }
}

}  // namespace tandem
