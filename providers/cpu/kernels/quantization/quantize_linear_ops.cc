// The linear (de)quantization ops: QuantizeLinear, DequantizeLinear (opsets 10-21: per
// tensor, per axis and blocked scales; 8/16-bit, 4/2-bit and float8/float4 types) and
// DynamicQuantizeLinear. Per-tensor float32 <-> 8-bit conversions on vector loops (the
// QDQ models' activations), the rest on reference loops; QLinearConv and QLinearMatMul are
// in quantized_ops.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/low_precision.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/microkernels/quantize_u8.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

// Value as double (exact for all integer types up to 2^53).
template <typename T>
double ToD(T v) {
  return static_cast<double>(v);
}

// ------------------------------------------------------------------ Quantization
// Scale / zero point as a per-tensor scalar, a 1-D per-axis vector, or (opset 21,
// block_size > 0) a tensor of the input's rank whose `axis` dim counts blocks of
// block_size consecutive elements.
struct QuantParams {
  int64_t axis_dim = 1, inner = 1;  // size of the quantized axis and of the dims after it
  int64_t block = 0, blocks = 1;    // block_size and the scale's dim on the axis (blocked)
  std::vector<double> scale;
  std::vector<double> zero;  // as values (float4 zero points are not integers)
  size_t At(int64_t i) const {
    if (scale.size() == 1) return 0;
    const int64_t a = (i / inner) % axis_dim;
    if (!block) return static_cast<size_t>(a);
    const int64_t outer = i / (inner * axis_dim);
    return static_cast<size_t>((outer * blocks + a / block) * inner + i % inner);
  }
};

absl::StatusOr<QuantParams> ReadQuantParams(const Tensor& x, const Tensor* scale, const Tensor* zp,
                                            int64_t axis_attr, int64_t block_size, int opset) {
  if (!scale) return absl::InvalidArgumentError("missing scale input");
  QuantParams q;
  const bool per_tensor = scale->numel() == 1 && scale->rank() <= 1;
  if (!per_tensor || block_size > 0) {
    if (opset < 13 || (block_size <= 0 && scale->rank() != 1))
      return absl::InvalidArgumentError("scale must be a scalar or a 1-D per-axis tensor, got " +
                                        DimsToString(scale->dims()));
    auto a = NormalizeAxis(axis_attr, x.rank());
    if (!a.ok()) return a.status();
    q.axis_dim = x.dim(*a);
    q.inner = DimProduct(x.dims(), *a + 1, x.rank());
    if (block_size > 0) {
      q.block = block_size;
      q.blocks = (q.axis_dim + block_size - 1) / block_size;
      Dims want = x.dims();
      want[*a] = q.blocks;
      if (scale->dims() != want)
        return absl::InvalidArgumentError("blocked scale " + DimsToString(scale->dims()) + " must be " +
                                          DimsToString(want) + " (block_size " + std::to_string(block_size) +
                                          " on axis " + std::to_string(*a) + ")");
    } else if (scale->dim(0) != q.axis_dim) {
      return absl::InvalidArgumentError("scale has " + std::to_string(scale->dim(0)) +
                                        " values but axis " + std::to_string(*a) +
                                        " of input has size " + std::to_string(q.axis_dim));
    }
  }
  for (int64_t i = 0; i < scale->numel(); ++i) q.scale.push_back(scale->ElementAsDouble(i));
  if (zp) {
    if (zp->dims() != scale->dims() && !(zp->numel() == 1 && scale->numel() == 1))
      return absl::InvalidArgumentError("zero point shape " + DimsToString(zp->dims()) +
                                        " differs from scale shape " +
                                        DimsToString(scale->dims()));
    for (int64_t i = 0; i < zp->numel(); ++i) q.zero.push_back(zp->ElementAsDouble(i));
  } else {
    q.zero.assign(q.scale.size(), 0);
  }
  return q;
}

// Per-tensor DequantizeLinear of 8-bit values into float32 (the reference loop's arithmetic),
// spread over the threads.
template <typename T>
void DequantizeInParallel(const T* x, int64_t n, float zero_point, float scale, float* y) {
  ParallelBlocks(n, [&](int64_t begin, int64_t end) {
    quantize_u8::DequantizeFrom8Bit(x + begin, end - begin, zero_point, scale, y + begin);
  });
}

// The integer range of a quantized type, or false for a type QuantizeLinear cannot write.
bool QuantRange(DataType t, double* lo, double* hi) {
  switch (t) {
    case DataType::kUint8: *lo = 0; *hi = 255; return true;
    case DataType::kInt8: *lo = -128; *hi = 127; return true;
    case DataType::kUint16: *lo = 0; *hi = 65535; return true;
    case DataType::kInt16: *lo = -32768; *hi = 32767; return true;
    case DataType::kUint4: *lo = 0; *hi = 15; return true;
    case DataType::kInt4: *lo = -8; *hi = 7; return true;
    case DataType::kUint2: *lo = 0; *hi = 3; return true;
    case DataType::kInt2: *lo = -2; *hi = 1; return true;
    default: return false;
  }
}

// Opset 21 added block_size and output_dtype (the type when no zero point is given), and
// 16-bit and narrow types: integers round, add the zero point and clip; float8 converts
// x / scale (zero point ignored, as onnx's reference) saturating unless saturate=0;
// float4 converts x / scale + zero point, saturating.
class QuantizeLinear : public Kernel {
 public:
  explicit QuantizeLinear(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.node.attr_int("axis", 1)),
        block_size_(info.node.attr_int("block_size", 0)),
        saturate_(info.node.attr_int("saturate", 1) != 0),
        output_dtype_(static_cast<DataType>(info.node.attr_int("output_dtype", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* zp = ctx.input(2);
    if (zp && output_dtype_ != DataType::kUndefined && zp->dtype() != output_dtype_)
      return absl::InvalidArgumentError("output_dtype differs from the zero point's type");
    const DataType yt = zp ? zp->dtype() : output_dtype_ != DataType::kUndefined ? output_dtype_ : DataType::kUint8;
    double lo = 0, hi = 0;
    const bool to_float = IsLowPrecisionFloat(yt) && yt != DataType::kFloat8E8M0;
    if (!to_float && !QuantRange(yt, &lo, &hi))
      return absl::InvalidArgumentError(std::string("unsupported output type ") + DataTypeName(yt) +
                                        " (8- and 16-bit integers, int4/uint4/int2/uint2, float8 and float4 are "
                                        "supported)");
    auto q = ReadQuantParams(x, ctx.input(1), zp, axis_, block_size_, opset_);
    if (!q.ok()) return q.status();
    Tensor& y = ctx.AllocateOutput(0, yt, x.dims());
    const int64_t n = x.numel();
    if (x.dtype() == DataType::kFloat && (yt == DataType::kUint8 || yt == DataType::kInt8) && q->scale.size() == 1) {
      const float scale = static_cast<float>(q->scale[0]), zero = static_cast<float>(q->zero[0]);
      uint8_t* out = static_cast<uint8_t*>(y.raw());
      ParallelBlocks(n, [&](int64_t begin, int64_t end) {
        quantize_u8::QuantizeTo8Bit(x.data<float>() + begin, end - begin, scale, zero, yt == DataType::kInt8,
                                    out + begin);
      });
      return absl::OkStatus();
    }
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      auto quotient = [&](int64_t i, size_t p) -> double {  // x / scale
        if constexpr (std::is_same_v<T, double> || std::is_integral_v<T>) return ToD(in[i]) / q->scale[p];
        else return static_cast<float>(in[i]) / static_cast<float>(q->scale[p]);  // as the reference
      };
      // The clipped integer level of element i.
      auto level = [&](int64_t i) {
        const size_t p = q->At(i);
        return std::min(hi, std::max(lo, std::nearbyint(quotient(i, p)) + q->zero[p]));
      };
      if (to_float) {
        const bool add_zero = yt == DataType::kFloat4E2M1;
        for (int64_t i = 0; i < n; ++i) {
          const size_t p = q->At(i);
          y.data<uint8_t>()[i] = LowPrecisionFromDouble(yt, quotient(i, p) + (add_zero ? q->zero[p] : 0.0), saturate_);
        }
      } else if (IsLowPrecision(yt)) {  // int4/uint4/int2/uint2: one value per byte
        for (int64_t i = 0; i < n; ++i) y.data<uint8_t>()[i] = static_cast<uint8_t>(static_cast<int8_t>(level(i)));
      } else {
        VisitNumericType(yt, [&](auto otag) {
          using O = decltype(otag);
          if constexpr (std::is_integral_v<O>)
            for (int64_t i = 0; i < n; ++i) y.data<O>()[i] = static_cast<O>(level(i));
        });
      }
    });
    return absl::OkStatus();
  }

 private:
  int opset_;
  int64_t axis_, block_size_;
  bool saturate_;
  DataType output_dtype_;
};

// Float8 and float4 inputs ignore the zero point, as onnx's reference does.
class DequantizeLinear : public Kernel {
 public:
  explicit DequantizeLinear(const KernelInfo& info)
      : opset_(info.opset),
        axis_(info.node.attr_int("axis", 1)),
        block_size_(info.node.attr_int("block_size", 0)),
        output_dtype_(static_cast<DataType>(info.node.attr_int("output_dtype", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (zp && zp->dtype() != x.dtype())
      return absl::InvalidArgumentError("zero point type differs from input type");
    auto q = ReadQuantParams(x, scale, zp, axis_, block_size_, opset_);
    if (!q.ok()) return q.status();
    DataType yt = scale->dtype();
    if (!IsFloatingPoint(yt)) return absl::InvalidArgumentError("scale must be a float tensor");
    if (output_dtype_ != DataType::kUndefined && output_dtype_ != yt)
      return absl::InvalidArgumentError(std::string("output_dtype ") + DataTypeName(output_dtype_) +
                                        " differs from the scale's type " + DataTypeName(yt));
    Tensor& y = ctx.AllocateOutput(0, yt, x.dims());
    if (yt == DataType::kFloat && q->scale.size() == 1 && x.dtype() == DataType::kUint8) {
      DequantizeInParallel(x.data<uint8_t>(), x.numel(), static_cast<float>(q->zero[0]), static_cast<float>(q->scale[0]),
                         y.data<float>());
      return absl::OkStatus();
    }
    if (yt == DataType::kFloat && q->scale.size() == 1 && x.dtype() == DataType::kInt8) {
      DequantizeInParallel(x.data<int8_t>(), x.numel(), static_cast<float>(q->zero[0]), static_cast<float>(q->scale[0]),
                         y.data<float>());
      return absl::OkStatus();
    }
    const bool float_input = IsLowPrecisionFloat(x.dtype());
    VisitNumericType(yt, [&](auto otag) {
      using O = decltype(otag);
      O* out = y.data<O>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        size_t p = q->At(i);
        const double v = x.ElementAsDouble(i) - (float_input ? 0.0 : q->zero[p]);
        if constexpr (std::is_same_v<O, double>)
          out[i] = static_cast<double>(v) * q->scale[p];
        else
          out[i] = static_cast<O>(static_cast<float>(v) * static_cast<float>(q->scale[p]));
      }
    });
    return absl::OkStatus();
  }

 private:
  int opset_;
  int64_t axis_, block_size_;
  DataType output_dtype_;
};

class DynamicQuantizeLinear : public Kernel {
 public:
  explicit DynamicQuantizeLinear(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const float* in = x.data<float>();
    const int64_t n = x.numel();
    // The range with 0 in it, then the values quantized (microkernels/quantize_u8.h).
    const quantize_u8::Kernels& k = quantize_u8::Builds().best();
    float mn = 0.f, mx = 0.f;
    k.range(in, n, &mn, &mx);
    float scale = (mx - mn) / 255.f;
    float zpf = scale == 0.f ? 0.f : std::nearbyint((0.f - mn) / scale);
    uint8_t zp = static_cast<uint8_t>(std::min(255.f, std::max(0.f, zpf)));
    Tensor& y = ctx.AllocateOutput(0, DataType::kUint8, x.dims());
    uint8_t* out = y.data<uint8_t>();
    if (scale == 0.f) {  // every value 0 (or NaN): 0, with zero point 0
      std::fill(out, out + n, uint8_t{0});
    } else {
      const float zpv = static_cast<float>(zp);
      ParallelBlocks(n, [&](int64_t begin, int64_t end) { k.quantize(in + begin, end - begin, scale, zpv, out + begin); });
    }
    ctx.AllocateOutput(1, DataType::kFloat, {}).data<float>()[0] = scale;
    ctx.AllocateOutput(2, DataType::kUint8, {}).data<uint8_t>()[0] = zp;
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterQuantizeLinearKernels(KernelRegistry& r) {
  using DT = DataType;
  const std::vector<DT> q_in = {DT::kFloat, DT::kInt32, DT::kFloat16, DT::kBfloat16,
                                DT::kDouble};
  r.Add("QuantizeLinear", 10, 12, q_in, Make<QuantizeLinear>());
  r.Add("QuantizeLinear", 13, 20, q_in, Make<QuantizeLinear>());
  r.Add("QuantizeLinear", 21, kMaxOpset, q_in, Make<QuantizeLinear>());
  const std::vector<DT> dq_in = {DT::kInt8, DT::kUint8, DT::kInt32};
  r.Add("DequantizeLinear", 10, 12, dq_in, Make<DequantizeLinear>());
  r.Add("DequantizeLinear", 13, 20, dq_in, Make<DequantizeLinear>());
  const std::vector<DT> dq_in_21 = {DT::kInt8,         DT::kUint8,          DT::kInt16,       DT::kUint16,
                                    DT::kInt32,        DT::kFloat8E4M3FN,   DT::kFloat8E4M3FNUZ,
                                    DT::kFloat8E5M2,   DT::kFloat8E5M2FNUZ, DT::kUint4,       DT::kInt4,
                                    DT::kFloat4E2M1,   DT::kUint2,          DT::kInt2};
  r.Add("DequantizeLinear", 21, kMaxOpset, dq_in_21, Make<DequantizeLinear>());
  r.Add("DynamicQuantizeLinear", 11, kMaxOpset, types::kFloat, Make<DynamicQuantizeLinear>());
}

}  // namespace tandem::cpu
