// ai.tandem MatMulIntegerToFloat(A, B, scale, a_zero_point?, b_zero_point?, bias?) -> Y
// (providers/cpu/rewrites/integer_matmul_to_float.h): MatMulInteger's int32 sums of A [..., M, K]
// and a constant-or-not B [K, N] (Int8MatMul, int8_matmul.h) written as float32: Y = float(sum)
// * scale (one value or N), then + bias [N] when given, the operations of the Cast, Mul and
// Add it replaces, in their order, so the result is theirs bit for bit. The sums are made in
// Y's own memory and converted in place.
#include <string>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/math/matmul_shape.h"
#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

class MatMulIntegerToFloat : public Kernel {
 public:
  explicit MatMulIntegerToFloat(const KernelInfo& info) : b_constant_(info.constant_input(1) != nullptr) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    const Tensor* scale = ctx.input(2);
    const Tensor* bias = ctx.num_inputs() > 5 ? ctx.input(5) : nullptr;
    if (b.rank() != 2) return absl::InvalidArgumentError("B must be a matrix, got " + DimsToString(b.dims()));
    auto shape = MatMulShapes(a.dims(), b.dims());
    if (!shape.ok()) return shape.status();
    const int64_t N = shape->n;
    if (!scale || scale->dtype() != DataType::kFloat || (scale->numel() != 1 && scale->numel() != N))
      return absl::InvalidArgumentError("scale must be float32, one value or " + std::to_string(N));
    if (bias && (bias->dtype() != DataType::kFloat || bias->numel() != N))
      return absl::InvalidArgumentError("bias must be float32 [" + std::to_string(N) + "]");
    std::vector<int32_t> azp, bzp;
    if (absl::Status st = Int8ZeroPoints(ctx.num_inputs() > 3 ? ctx.input(3) : nullptr, a.dtype(), shape->m,
                                         "a_zero_point", "row", &azp);
        !st.ok())
      return st;
    if (absl::Status st = Int8ZeroPoints(ctx.num_inputs() > 4 ? ctx.input(4) : nullptr, b.dtype(), N, "b_zero_point",
                                         "column", &bzp);
        !st.ok())
      return st;
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, shape->out);
    if (y.numel() == 0) return absl::OkStatus();
    if (absl::Status st = product_.SetB(b, bzp, b_constant_); !st.ok()) return st;
    const int64_t rows = y.numel() / N;
    int32_t* sums = reinterpret_cast<int32_t*>(y.data<float>());  // same size: converted in place
    if (absl::Status st = product_.Run(a.raw(), a.dtype(), rows, azp, sums); !st.ok()) return st;
    const float* s = scale->data<float>();
    const float* c = bias ? bias->data<float>() : nullptr;
    const bool per_column = scale->numel() != 1;
    float* out = y.data<float>();
    // Two roundings, as the Cast-Mul-Add nodes make them (the baseline build has no FMA to
    // contract them into).
    ParallelBlocks(rows, [=](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        float* row = out + r * N;
        const int32_t* in = sums + r * N;
        for (int64_t j = 0; j < N; ++j) {
          const float v = static_cast<float>(in[j]) * s[per_column ? j : 0];
          row[j] = c ? v + c[j] : v;
        }
      }
    }, N);
    return absl::OkStatus();
  }

 private:
  bool b_constant_;
  Int8MatMul product_;
};

}  // namespace

void RegisterMatMulIntegerToFloatKernels(KernelRegistry& r) {
  r.Add(TandemKernel("MatMulIntegerToFloat", {DataType::kUint8, DataType::kInt8}, Make<MatMulIntegerToFloat>()));
}

}  // namespace tandem::cpu
