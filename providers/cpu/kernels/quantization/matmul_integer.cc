// MatMulInteger (opset 10): int32 products of (A - a_zero_point) and (B - b_zero_point), A and
// B uint8 or int8 with MatMul's shapes, a zero point per tensor, per row of A ([M]) or per
// column of B ([N]). A 2-D B (a layer's weights, whatever A's batch dims) runs on
// Int8MatMul (int8_matmul.h: oneDNN's int8 matmul with VNNI or AMX, exact float32 blocks
// otherwise; a constant B prepared once); a batched B on the reference loop.
#include <string>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/math/matmul_shape.h"
#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

class MatMulInteger : public Kernel {
 public:
  explicit MatMulInteger(const KernelInfo& info) : b_constant_(info.constant_input(1) != nullptr) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(1);
    auto shape = MatMulShapes(a.dims(), b.dims());
    if (!shape.ok()) return shape.status();
    const MatMulShape& s = *shape;
    std::vector<int32_t> azp, bzp;
    if (absl::Status st = Int8ZeroPoints(ctx.input(2), a.dtype(), s.m, "a_zero_point", "row", &azp); !st.ok()) return st;
    if (absl::Status st = Int8ZeroPoints(ctx.input(3), b.dtype(), s.n, "b_zero_point", "column", &bzp); !st.ok())
      return st;
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt32, s.out);
    if (y.numel() == 0) return absl::OkStatus();
    if (b.rank() == 2) {  // A's rows, whatever its batch dims, against one matrix
      if (absl::Status st = product_.SetB(b, bzp, b_constant_); !st.ok()) return st;
      return product_.Run(a.raw(), a.dtype(), y.numel() / s.n, azp, y.data<int32_t>());
    }
    Reference(a, b, s, azp, bzp, y.data<int32_t>());
    return absl::OkStatus();
  }

 private:
  // Batched B: int32 sums element by element.
  static void Reference(const Tensor& a, const Tensor& b, const MatMulShape& s, const std::vector<int32_t>& azp,
                        const std::vector<int32_t>& bzp, int32_t* py) {
    auto as = BroadcastStrides(s.a_batch, s.batch), bs = BroadcastStrides(s.b_batch, s.batch);
    auto av = [&](int64_t i) -> int32_t {
      return a.dtype() == DataType::kInt8 ? a.data<int8_t>()[i] : a.data<uint8_t>()[i];
    };
    auto bv = [&](int64_t i) -> int32_t {
      return b.dtype() == DataType::kInt8 ? b.data<int8_t>()[i] : b.data<uint8_t>()[i];
    };
    ForEachBroadcast(s.batch, {as, bs}, [&](int64_t o, const std::vector<int64_t>& off) {
      const int64_t a0 = off[0] * s.m * s.k, b0 = off[1] * s.k * s.n;
      for (int64_t i = 0; i < s.m; ++i) {
        const int32_t za = azp[azp.size() == 1 ? 0 : i];
        for (int64_t j = 0; j < s.n; ++j) {
          const int32_t zb = bzp[bzp.size() == 1 ? 0 : j];
          uint32_t acc = 0;  // int32 arithmetic, wrapping
          for (int64_t kk = 0; kk < s.k; ++kk)
            acc += static_cast<uint32_t>((av(a0 + i * s.k + kk) - za) * (bv(b0 + kk * s.n + j) - zb));
          py[o * s.m * s.n + i * s.n + j] = static_cast<int32_t>(acc);
        }
      }
    });
  }

  bool b_constant_;
  Int8MatMul product_;
};

}  // namespace

void RegisterMatMulIntegerKernels(KernelRegistry& r) {
  r.Add("MatMulInteger", 10, kMaxOpset, {DataType::kInt8, DataType::kUint8}, Make<MatMulInteger>());
}

}  // namespace tandem::cpu
