// ai.tandem QLinearAdd and QLinearMul (providers/cpu/rewrites/quantized_add.h): C =
// QuantizeLinear(DequantizeLinear(A) + (or *) DequantizeLinear(B)) with one scale and zero point each, in one pass
// over 8-bit values: per element (float(a) - a_zp) * a_scale + (float(b) - b_zp) * b_scale in
// float32, the three nodes' own operations (no FMA: this file is built for the baseline ISA,
// and quantize_u8's add, for uint8 throughout, keeps the terms apart), then quantize_u8's
// rounding and saturation. Bit for bit the nodes it replaces. A and B broadcast numpy-style.
#include <algorithm>
#include <string>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/quantize_u8.h"

namespace tandem::cpu {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

float ValueAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUint8 ? static_cast<float>(t.data<uint8_t>()[i])
                                       : static_cast<float>(t.data<int8_t>()[i]);
}

struct Param {
  float scale = 1.f, zero = 0.f;
};

absl::StatusOr<Param> ReadParam(const KernelContext& ctx, int scale_input, const char* what) {
  const Tensor* s = ctx.input(scale_input);
  const Tensor* z = ctx.input(scale_input + 1);
  if (!s || s->dtype() != DataType::kFloat || s->numel() != 1 || !z || !Is8Bit(z->dtype()) || z->numel() != 1)
    return absl::InvalidArgumentError(std::string(what) +
                                      "'s scale and zero point must be one float32 and one 8-bit value");
  return Param{s->data<float>()[0], static_cast<float>(z->ElementAsInt64(0))};
}

// Values [begin, begin + n) of 8-bit t, dequantized into out.
void Dequantize(const Tensor& t, int64_t begin, int64_t n, Param p, float* out) {
  if (t.dtype() == DataType::kUint8) quantize_u8::DequantizeFrom8Bit(t.data<uint8_t>() + begin, n, p.zero, p.scale, out);
  else quantize_u8::DequantizeFrom8Bit(t.data<int8_t>() + begin, n, p.zero, p.scale, out);
}

// Whether `part`, leading 1s aside, is the trailing dims of `whole`.
bool IsTrailingPart(const Dims& part, const Dims& whole) {
  size_t first = 0;
  while (first < part.size() && part[first] == 1) ++first;
  const size_t k = part.size() - first;
  return k <= whole.size() && std::equal(part.begin() + static_cast<std::ptrdiff_t>(first), part.end(),
                                         whole.end() - static_cast<std::ptrdiff_t>(k));
}

template <bool kMul>
class QLinearAdd : public Kernel {
 public:
  explicit QLinearAdd(const KernelInfo&) {}

  static float Combine(float a, float b) { return kMul ? a * b : a + b; }

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(3);
    const Tensor* cz = ctx.input(7);
    if (!a || !b || !Is8Bit(a->dtype()) || !Is8Bit(b->dtype()))
      return absl::InvalidArgumentError("A and B must be int8 or uint8 tensors");
    auto pa = ReadParam(ctx, 1, "A");
    if (!pa.ok()) return pa.status();
    auto pb = ReadParam(ctx, 4, "B");
    if (!pb.ok()) return pb.status();
    auto pc = ReadParam(ctx, 6, "C");
    if (!pc.ok()) return pc.status();
    auto dims = BroadcastShapes(a->dims(), b->dims());
    if (!dims.ok()) return dims.status();
    const bool to_int8 = cz->dtype() == DataType::kInt8;
    Tensor& c = ctx.AllocateOutput(0, cz->dtype(), *dims);
    uint8_t* out = static_cast<uint8_t*>(c.raw());
    const int64_t n = c.numel();
    if (!kMul && a->dims() == b->dims() && a->dtype() == DataType::kUint8 && b->dtype() == DataType::kUint8 &&
        !to_int8) {
      const quantize_u8::AddParams p{pa->scale, pa->zero, pb->scale, pb->zero, pc->scale, pc->zero};
      const quantize_u8::Kernels& k = quantize_u8::Builds().best();
      ParallelBlocks(n, [&](int64_t begin, int64_t end) {
        k.add(a->data<uint8_t>() + begin, b->data<uint8_t>() + begin, end - begin, p, out + begin);
      });
      return absl::OkStatus();
    }
    if (a->dims() == b->dims()) {
      ParallelBlocks(n, [&](int64_t begin, int64_t end) {
        constexpr int64_t kChunk = 256;
        float fa[kChunk], fb[kChunk];
        for (int64_t i0 = begin; i0 < end; i0 += kChunk) {
          const int64_t m = std::min(kChunk, end - i0);
          Dequantize(*a, i0, m, *pa, fa);
          Dequantize(*b, i0, m, *pb, fb);
#pragma omp simd
          for (int64_t i = 0; i < m; ++i) fa[i] = Combine(fa[i], fb[i]);
          quantize_u8::QuantizeTo8Bit(fa, m, pc->scale, pc->zero, to_int8, out + i0);
        }
      });
      return absl::OkStatus();
    }
    // One operand spans the output and the other its trailing dims (a bias): each row of the
    // one plus the other, dequantized once.
    const Tensor* big = a->dims() == *dims ? a : b->dims() == *dims ? b : nullptr;
    const Tensor* small = big == a ? b : a;
    if (big && small->numel() >= 16 && IsTrailingPart(small->dims(), *dims)) {
      const Param p_big = big == a ? *pa : *pb, p_small = big == a ? *pb : *pa;
      const int64_t row = small->numel();
      std::vector<float> fs(static_cast<size_t>(row));
      Dequantize(*small, 0, row, p_small, fs.data());
      ParallelBlocks(
          n / row,
          [&](int64_t r0, int64_t r1) {
            std::vector<float> f(static_cast<size_t>(row));
            for (int64_t r = r0; r < r1; ++r) {
              Dequantize(*big, r * row, row, p_big, f.data());
#pragma omp simd
              for (int64_t i = 0; i < row; ++i) f[i] = Combine(f[i], fs[i]);
              quantize_u8::QuantizeTo8Bit(f.data(), row, pc->scale, pc->zero, to_int8, out + r * row);
            }
          },
          row);
      return absl::OkStatus();
    }
    std::vector<float> sum(static_cast<size_t>(n));
    ForEachBroadcast(*dims, {BroadcastStrides(a->dims(), *dims), BroadcastStrides(b->dims(), *dims)},
                     [&](int64_t i, const std::vector<int64_t>& off) {
                       const float va = (ValueAt(*a, off[0]) - pa->zero) * pa->scale;
                       const float vb = (ValueAt(*b, off[1]) - pb->zero) * pb->scale;
                       sum[i] = Combine(va, vb);
                     });
    quantize_u8::QuantizeTo8Bit(sum.data(), n, pc->scale, pc->zero, to_int8, out);
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterQLinearAddKernels(KernelRegistry& r) {
  r.Add(TandemKernel("QLinearAdd", {DataType::kUint8, DataType::kInt8}, Make<QLinearAdd<false>>()));
  r.Add(TandemKernel("QLinearMul", {DataType::kUint8, DataType::kInt8}, Make<QLinearAdd<true>>()));
}

}  // namespace tandem::cpu
