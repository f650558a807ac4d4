// Quantized linear kernels (opset 10): QLinearConv and QLinearMatMul on int8/uint8. The sums
// of inputs minus their zero points are exact: from Int8MatMul (int8_matmul.h: int32, oneDNN
// or float32 blocks) for QLinearConv (im2col) and a QLinearMatMul with a 2-D B, else from
// reference loops in 64-bit integers (the same below 2^31). Each is requantized as
// saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zero_point), with the scale
// product formed in float as the ONNX reference does; QLinearConv on oneDNN's int8
// convolution (VNNI/AMX) requantizes in float32 instead (int8_conv.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/quantization/conv_columns.h"
#include "providers/cpu/kernels/quantization/int8_conv.h"
#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// Values of an int8/uint8 tensor as int32.
std::vector<int32_t> ToInt32(const Tensor& t) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::kUint8) {
    const uint8_t* p = t.data<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    const int8_t* p = t.data<int8_t>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  }
  return v;
}

// dst [cols, rows] = src [rows, cols] transposed, in tiles of a few cache lines each way.
template <typename T>
void Transpose(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 32;
  ParallelForIf(rows * cols >= (1 << 16), (cols + kTile - 1) / kTile, [&](int64_t t) {
    const int64_t c0 = t * kTile, c1 = std::min(cols, c0 + kTile);
    for (int64_t r0 = 0; r0 < rows; r0 += kTile)
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < std::min(rows, r0 + kTile); ++r) dst[c * rows + r] = src[r * cols + c];
  });
}

// Values of a scale tensor as float (float16 and bfloat16 scales from opset 21).
absl::StatusOr<std::vector<float>> ReadScales(const Tensor* t, const char* name) {
  if (!t) return absl::InvalidArgumentError(std::string("missing input '") + name + "'");
  if (!IsFloatingPoint(t->dtype()))
    return absl::InvalidArgumentError(std::string("input '") + name + "' must be a float tensor");
  std::vector<float> v(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) v[i] = static_cast<float>(t->ElementAsDouble(i));
  return v;
}

// Zero-point values (int32); an omitted zero point is 0 of type `fallback`.
absl::StatusOr<std::vector<int32_t>> ReadZeroPoints(const Tensor* t, DataType expected,
                                                    const char* name) {
  if (!t) return std::vector<int32_t>{0};
  if (t->dtype() != expected)
    return absl::InvalidArgumentError(std::string("input '") + name + "' must have type " +
                                      DataTypeName(expected) + ", got " +
                                      DataTypeName(t->dtype()));
  return ToInt32(*t);
}

// Round half to even, add the zero point and saturate to the 8-bit output type.
int32_t Requantize(double v, int32_t zero_point, bool is_unsigned) {
  const double lo = is_unsigned ? 0.0 : -128.0, hi = is_unsigned ? 255.0 : 127.0;
  double r = std::nearbyint(v);  // default rounding mode: to nearest, ties to even
  if (std::isnan(r)) r = 0.0;
  r += zero_point;
  return static_cast<int32_t>(std::min(std::max(r, lo), hi));
}

// y[i] = saturate(round_half_even((sums[i] + bias) * mult[i or 0]) + zero_point) for n values
// (mult: one per value, or `one_mult` for all), into uint8 or int8 `y`: Requantize's
// arithmetic in double without its libm call where the multipliers are finite (values held
// within +-2^40, which saturate anyway; rounded by adding and taking away 1.5 * 2^52).
void RequantizeRun(const int32_t* sums, int64_t n, int64_t bias, const double* mult, double one_mult,
                   int32_t zero_point, DataType y_type, void* y) {
  const bool y_unsigned = y_type == DataType::kUint8;
  uint8_t* yu = static_cast<uint8_t*>(y);
  int8_t* ys = static_cast<int8_t*>(y);
  bool finite = std::isfinite(one_mult);
  for (int64_t i = 0; mult && finite && i < n; ++i) finite = std::isfinite(mult[i]);
  if (!finite) {
    for (int64_t i = 0; i < n; ++i) {
      const int32_t v = Requantize(static_cast<double>(sums[i] + bias) * (mult ? mult[i] : one_mult), zero_point, y_unsigned);
      if (y_unsigned) yu[i] = static_cast<uint8_t>(v);
      else ys[i] = static_cast<int8_t>(v);
    }
    return;
  }
  const double lo = y_unsigned ? 0.0 : -128.0, hi = y_unsigned ? 255.0 : 127.0, zp = zero_point;
  for (int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(sums[i] + bias) * (mult ? mult[i] : one_mult);
    v = v < -0x1p40 ? -0x1p40 : v > 0x1p40 ? 0x1p40 : v;
    v = ((v + 0x1.8p52) - 0x1.8p52) + zp;
    v = v < lo ? lo : v > hi ? hi : v;
    if (y_unsigned) yu[i] = static_cast<uint8_t>(v);
    else ys[i] = static_cast<int8_t>(static_cast<int32_t>(v));
  }
}

void StoreQuantized(const std::vector<int32_t>& v, Tensor& y) {
  if (y.dtype() == DataType::kUint8) {
    uint8_t* p = y.data<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<uint8_t>(v[i]);
  } else {
    int8_t* p = y.data<int8_t>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<int8_t>(v[i]);
  }
}

// Output type and zero point from y_zero_point (uint8 / 0 when omitted).
absl::Status OutputZeroPoint(const Tensor* yzp, DataType* type, int32_t* zp) {
  *type = DataType::kUint8;
  *zp = 0;
  if (!yzp) return absl::OkStatus();
  if (!Is8Bit(yzp->dtype()))
    return absl::InvalidArgumentError("y_zero_point must be int8 or uint8");
  if (yzp->numel() != 1)
    return absl::InvalidArgumentError("y_zero_point must be a scalar, got shape " +
                                      DimsToString(yzp->dims()));
  *type = yzp->dtype();
  *zp = ToInt32(*yzp)[0];
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// QLinearConv-10: x (N x C x D1..Dn), w (M x C/group x k1..kn), per-tensor x/y params,
// per-tensor or per-output-channel w params, optional int32 bias B[M] (scale x_scale *
// w_scale, zero point 0).

// 2-D convolutions with int8 weights of zero point 0 that do not change (what static
// quantizers write, and optimizer/onnx_rewrites/qdq_fusion.h makes) run on oneDNN's
// int8 convolution (int8_conv.h) where the CPU has VNNI or AMX; the others (1-D and 3-D,
// uint8 or non-zero-point weights, non-constant weights) on exact products (Products). Without
// VNNI the CPU provider turns QLinearConvs with constant weights back into float32
// convolutions first (rewrites/qlinear_conv_in_float.h). With channel_block = kChannelsLast (the CPU provider's layout pass) x arrives
// channels-last when it has 5 dims, and y is written so unless blocked_output = 0.
class QLinearConv : public Kernel {
 public:
  explicit QLinearConv(const KernelInfo& info)
      : node_(info.node),
        group_(info.node.attr_int("group", 1)),
        w_constant_(info.constant_input(3) != nullptr),
        channels_last_(info.node.attr_int("channel_block", 0) == kChannelsLast),
        y_channels_last_(channels_last_ && info.node.attr_int("blocked_output", 1) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const bool x_channels_last = channels_last_ && ctx.input(0)->rank() == 5;
    Tensor x_view;
    if (x_channels_last) {
      auto v = LogicalView(*ctx.input(0), kChannelsLast, 4);
      if (!v.ok()) return v.status();
      x_view = *v;
    }
    const Tensor& x = x_channels_last ? x_view : *ctx.input(0);
    const Tensor* w_t = ctx.input(3);
    if (!w_t) return absl::InvalidArgumentError("missing input 'w'");
    const Tensor& w = *w_t;
    if (!Is8Bit(w.dtype())) return absl::InvalidArgumentError("w must be int8 or uint8");
    if (x.rank() < 3 || w.rank() != x.rank())
      return absl::InvalidArgumentError("x must be N x C x D1..Dn and w M x C/group x k1..kn "
                                        "of the same rank, got x " + DimsToString(x.dims()) +
                                        " and w " + DimsToString(w.dims()));
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    if (group_ <= 0 || C != w.dim(1) * group_ || M % group_ != 0)
      return absl::InvalidArgumentError(
          "channel mismatch: x has " + std::to_string(C) + " channels, w " +
          DimsToString(w.dims()) + ", group " + std::to_string(group_));
    auto xs = ReadScales(ctx.input(1), "x_scale");
    if (!xs.ok()) return xs.status();
    auto ws = ReadScales(ctx.input(4), "w_scale");
    if (!ws.ok()) return ws.status();
    auto ys = ReadScales(ctx.input(6), "y_scale");
    if (!ys.ok()) return ys.status();
    auto xz = ReadZeroPoints(ctx.input(2), x.dtype(), "x_zero_point");
    if (!xz.ok()) return xz.status();
    auto wz = ReadZeroPoints(ctx.input(5), w.dtype(), "w_zero_point");
    if (!wz.ok()) return wz.status();
    if (xs->size() != 1 || xz->size() != 1 || ys->size() != 1)
      return absl::InvalidArgumentError("x_scale, x_zero_point and y_scale must be scalars");
    const auto per_m = [&](size_t n) { return n == 1 || static_cast<int64_t>(n) == M; };
    if (!per_m(ws->size()) || !per_m(wz->size()))
      return absl::InvalidArgumentError("w_scale and w_zero_point must be scalars or have " +
                                        std::to_string(M) + " values");
    DataType y_type;
    int32_t yz;
    if (auto st = OutputZeroPoint(ctx.input(7), &y_type, &yz); !st.ok()) return st;
    const Tensor* bias = ctx.input(8);
    if (bias && (bias->dtype() != DataType::kInt32 || bias->numel() != M))
      return absl::InvalidArgumentError("B must be int32 with " + std::to_string(M) +
                                        " values, got " + DimsToString(bias->dims()));

    const int S = x.rank() - 2;
    std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
    if (node_.has_attr("kernel_shape") && node_.attr_ints("kernel_shape") != kernel)
      return absl::InvalidArgumentError("kernel_shape attribute does not match w's shape " +
                                        DimsToString(w.dims()));
    const Dims in(x.dims().begin() + 2, x.dims().end());
    auto geo = ComputeWindowGeometry(node_, in, kernel, false);
    if (!geo.ok()) return geo.status();
    Dims out_dims = {N, M};
    out_dims.insert(out_dims.end(), geo->out.begin(), geo->out.end());
    Tensor& y = ctx.AllocateOutput(0, y_type, y_channels_last_ ? BlockedDims(out_dims, kChannelsLast) : out_dims);
    if (y.numel() == 0) return absl::OkStatus();
    const bool w_zero = std::all_of(wz->begin(), wz->end(), [](int32_t z) { return z == 0; });
    if (S == 2 && w.dtype() == DataType::kInt8 && w_zero && w_constant_ && Int8DotProductsExact()) {
      std::vector<float> scales(ws->size());
      for (size_t m = 0; m < scales.size(); ++m) scales[m] = ((*xs)[0] * (*ws)[m]) / (*ys)[0];
      return conv_.Run(x.raw(), x.dtype(), x.dims(), x_channels_last, (*xz)[0], w, group_, bias, scales, yz, y,
                       y_channels_last_, *geo);
    }
    // The other routes read and write the plain layout.
    if (S > 3) return absl::UnimplementedError("QLinearConv supports 1 to 3 spatial dimensions");
    Tensor x_plain, y_plain;
    if (x_channels_last) {
      x_plain = Tensor::Host(x.dtype(), x.dims());
      if (absl::Status st = ReorderChannels8Bit(x.raw(), true, x_plain.raw(), x.dtype(), x.dims()); !st.ok())
        return st;
    }
    if (y_channels_last_) y_plain = Tensor::Host(y_type, out_dims);
    const Tensor& xp = x_channels_last ? x_plain : x;
    Tensor& yp = y_channels_last_ ? y_plain : y;
    if (absl::Status st = Products(xp, w, bias, *xs, *ws, *ys, (*xz)[0], *wz, yz, MakeGeo3(in, geo->out, *geo), yp);
        !st.ok())
      return st;
    if (y_channels_last_) return ReorderChannels8Bit(y_plain.raw(), false, y.raw(), y_type, out_dims);
    return absl::OkStatus();
  }

 private:
  // Per image and group: the exact int32 sums (col_g - x_zp)^T (W_g - w_zp)^T from Int8MatMul
  // (the columns padded with x_zp, conv_columns.h; W_g^T the constant operand, converted
  // and packed once), then saturate(round_half_even((sum + bias) * mult) + y_zp) in double,
  // mult formed in float as the ONNX reference does: bit for bit its definition.
  absl::Status Products(const Tensor& x, const Tensor& w, const Tensor* bias, const std::vector<float>& xs,
                        const std::vector<float>& ws, const std::vector<float>& ys, int32_t xz,
                        const std::vector<int32_t>& wz, int32_t yz, const Geo3& g, Tensor& y) {
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0), Cg = C / group_, Mg = M / group_;
    const int64_t K = Cg * g.k_size(), P = g.out_size();
    if (!w_constant_ || per_group_.empty()) {  // W_g^T [K, Mg] per group, its zero points per column
      per_group_.resize(static_cast<size_t>(group_));
      Tensor wt = Tensor::Host(w.dtype(), {K, Mg});
      for (int64_t gi = 0; gi < group_; ++gi) {
        const uint8_t* src = static_cast<const uint8_t*>(w.raw()) + gi * Mg * K;  // 8-bit values
        uint8_t* dst = static_cast<uint8_t*>(wt.raw());
        for (int64_t m = 0; m < Mg; ++m)
          for (int64_t k = 0; k < K; ++k) dst[k * Mg + m] = src[m * K + k];
        std::vector<int32_t> zp(static_cast<size_t>(Mg));
        for (int64_t m = 0; m < Mg; ++m) zp[m] = wz[wz.size() == 1 ? 0 : gi * Mg + m];
        if (absl::Status st = per_group_[gi].SetB(wt, zp, w_constant_); !st.ok()) return st;
      }
    }
    Tensor col = Tensor::Host(x.dtype(), {K, P}), col_t = Tensor::Host(x.dtype(), {P, K});
    std::vector<int32_t> sums(static_cast<size_t>(P * Mg)), sums_t(sums.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t gi = 0; gi < group_; ++gi) {
        const int64_t x_off = (n * C + gi * Cg) * g.in_size();
        if (x.dtype() == DataType::kUint8)
          ConvColumns(x.data<uint8_t>() + x_off, Cg, g, static_cast<uint8_t>(xz), col.data<uint8_t>());
        else
          ConvColumns(x.data<int8_t>() + x_off, Cg, g, static_cast<int8_t>(xz), col.data<int8_t>());
        Transpose(static_cast<const uint8_t*>(col.raw()), K, P, static_cast<uint8_t*>(col_t.raw()));
        if (absl::Status st = per_group_[gi].Run(col_t.raw(), x.dtype(), P, {xz}, sums.data()); !st.ok()) return st;
        Transpose(sums.data(), P, Mg, sums_t.data());  // each channel's sums contiguous
        ParallelForIf(Mg * P >= (1 << 14), Mg, [&](int64_t mi) {
          const int64_t m = gi * Mg + mi;
          const double mult = (xs[0] * ws[ws.size() == 1 ? 0 : m]) / ys[0];
          const int64_t b = bias ? bias->data<int32_t>()[m] : 0;
          uint8_t* out = static_cast<uint8_t*>(y.raw()) + (n * M + m) * P;  // 8-bit values
          RequantizeRun(sums_t.data() + mi * P, P, b, nullptr, mult, yz, y.dtype(), out);
        });
      }
    return absl::OkStatus();
  }

  const Node node_;
  int64_t group_;
  bool w_constant_;
  bool channels_last_, y_channels_last_;
  Int8Conv conv_;
  std::vector<Int8MatMul> per_group_;  // Products: B = W_g^T of each group
};

// ---------------------------------------------------------------------------------------
// QLinearMatMul-10: numpy matmul of a [..., M, K] and b [..., K, N] (1-D operands are
// promoted as numpy does). a's scale/zero point are per tensor or per row (shape [M] or
// broadcastable to [..., M, 1]); b's per tensor or per column ([N] or [..., 1, N]).

// Expands a quantization parameter of `param_dims` to one value per element of
// `target` (a's dims with the last dim 1, or b's with the second-to-last dim 1).
template <typename T>
absl::StatusOr<std::vector<T>> ExpandParam(const std::vector<T>& v, Dims param_dims,
                                           const Dims& target, const char* name) {
  const int64_t n = NumElements(target);
  if (v.size() == 1) return std::vector<T>(static_cast<size_t>(n), v[0]);
  auto shape = BroadcastShapes(param_dims, target);
  if (param_dims.size() > target.size() || !shape.ok() || *shape != target)
    return absl::InvalidArgumentError(std::string(name) + " of shape " +
                                      DimsToString(param_dims) +
                                      " is neither per tensor nor broadcastable to " +
                                      DimsToString(target));
  std::vector<T> out(static_cast<size_t>(n));
  ForEachBroadcast(target, {BroadcastStrides(param_dims, target)},
                   [&](int64_t i, const std::vector<int64_t>& off) { out[i] = v[off[0]]; });
  return out;
}

class QLinearMatMul : public Kernel {
 public:
  explicit QLinearMatMul(const KernelInfo& info) : b_constant_(info.constant_input(3) != nullptr) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor* b_t = ctx.input(3);
    if (!b_t) return absl::InvalidArgumentError("missing input 'b'");
    const Tensor& b = *b_t;
    if (!Is8Bit(b.dtype())) return absl::InvalidArgumentError("b must be int8 or uint8");
    if (a.rank() < 1 || b.rank() < 1)
      return absl::InvalidArgumentError("a and b must have rank >= 1");
    // Promote 1-D operands: a [K] -> [1, K], b [K] -> [K, 1].
    Dims ad = a.dims(), bd = b.dims();
    if (ad.size() == 1) ad.insert(ad.begin(), 1);
    if (bd.size() == 1) bd.push_back(1);
    const int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
    if (bd[bd.size() - 2] != K)
      return absl::InvalidArgumentError("inner dimensions differ: a " + DimsToString(a.dims()) +
                                        ", b " + DimsToString(b.dims()));
    const Dims a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
    auto out_batch = BroadcastShapes(a_batch, b_batch);
    if (!out_batch.ok()) return out_batch.status();

    auto as = ReadScales(ctx.input(1), "a_scale");
    if (!as.ok()) return as.status();
    auto bs = ReadScales(ctx.input(4), "b_scale");
    if (!bs.ok()) return bs.status();
    auto ys = ReadScales(ctx.input(6), "y_scale");
    if (!ys.ok()) return ys.status();
    if (ys->size() != 1) return absl::InvalidArgumentError("y_scale must be a scalar");
    auto az = ReadZeroPoints(ctx.input(2), a.dtype(), "a_zero_point");
    if (!az.ok()) return az.status();
    auto bz = ReadZeroPoints(ctx.input(5), b.dtype(), "b_zero_point");
    if (!bz.ok()) return bz.status();
    DataType y_type;
    int32_t yz;
    if (auto st = OutputZeroPoint(ctx.input(7), &y_type, &yz); !st.ok()) return st;

    // Per-row params of a: rank-1 [M] means [M, 1].
    Dims a_rows = ad;
    a_rows.back() = 1;
    Dims b_cols = bd;
    b_cols[b_cols.size() - 2] = 1;
    auto param_dims = [](const Tensor* t, bool row) {
      if (!t) return Dims{};
      Dims d = t->dims();
      if (row && d.size() == 1) d.push_back(1);
      return d;
    };
    auto as_e = ExpandParam(*as, param_dims(ctx.input(1), true), a_rows, "a_scale");
    if (!as_e.ok()) return as_e.status();
    auto az_e = ExpandParam(*az, param_dims(ctx.input(2), true), a_rows, "a_zero_point");
    if (!az_e.ok()) return az_e.status();
    auto bs_e = ExpandParam(*bs, param_dims(ctx.input(4), false), b_cols, "b_scale");
    if (!bs_e.ok()) return bs_e.status();
    auto bz_e = ExpandParam(*bz, param_dims(ctx.input(5), false), b_cols, "b_zero_point");
    if (!bz_e.ok()) return bz_e.status();

    Dims out_dims = *out_batch;
    if (a.rank() > 1) out_dims.push_back(M);
    if (b.rank() > 1) out_dims.push_back(N);
    Tensor& y = ctx.AllocateOutput(0, y_type, out_dims);
    if (y.numel() == 0) return absl::OkStatus();

    const bool y_unsigned = y_type == DataType::kUint8;
    std::vector<int32_t> yv(static_cast<size_t>(y.numel()));
    if (bd.size() == 2) {  // one B for every row of A: the sums from Int8MatMul, requantized as below
      const int64_t rows = y.numel() / N;
      if (absl::Status st = product_.SetB(b.Reshaped(bd), *bz_e, b_constant_); !st.ok()) return st;
      if (absl::Status st = product_.Run(a.raw(), a.dtype(), rows, *az_e, yv.data()); !st.ok()) return st;
      // Per row, the multipliers of its columns (formed in float, as below), made once for
      // every row when a's scale is one value.
      const bool a_one = std::all_of(as_e->begin(), as_e->end(), [&](float v) { return v == (*as_e)[0]; });
      std::vector<double> mult(static_cast<size_t>(N));
      for (int64_t r = 0; r < rows; ++r) {
        if (r == 0 || !a_one)
          for (int64_t j = 0; j < N; ++j) mult[j] = static_cast<float>(((*as_e)[r] * (*bs_e)[j]) / (*ys)[0]);
        RequantizeRun(yv.data() + r * N, N, 0, mult.data(), 0.0, yz, y_type,
                      static_cast<uint8_t*>(y.raw()) + r * N);  // 8-bit values
      }
      return absl::OkStatus();
    }
    const std::vector<int32_t> av = ToInt32(a), bv = ToInt32(b);
    std::vector<int64_t> acc(static_cast<size_t>(N));
    ForEachBroadcast(
        *out_batch, {BroadcastStrides(a_batch, *out_batch), BroadcastStrides(b_batch, *out_batch)},
        [&](int64_t ob, const std::vector<int64_t>& off) {
          const int64_t ai = off[0], bi = off[1];
          for (int64_t i = 0; i < M; ++i) {
            std::fill(acc.begin(), acc.end(), 0);
            const int32_t zr = (*az_e)[ai * M + i];
            for (int64_t k = 0; k < K; ++k) {
              const int64_t va = av[(ai * M + i) * K + k] - zr;
              if (va == 0) continue;
              const int32_t* brow = bv.data() + (bi * K + k) * N;
              const int32_t* bzr = bz_e->data() + bi * N;
              for (int64_t j = 0; j < N; ++j) acc[j] += va * (brow[j] - bzr[j]);
            }
            for (int64_t j = 0; j < N; ++j) {
              const float mult = ((*as_e)[ai * M + i] * (*bs_e)[bi * N + j]) / (*ys)[0];
              yv[(ob * M + i) * N + j] = Requantize(
                  static_cast<double>(acc[j]) * static_cast<double>(mult), yz, y_unsigned);
            }
          }
        });
    StoreQuantized(yv, y);
    return absl::OkStatus();
  }

 private:
  bool b_constant_;
  Int8MatMul product_;
};

}  // namespace

void RegisterQuantizedKernels(KernelRegistry& r) {
  const std::vector<DataType> q = {DataType::kInt8, DataType::kUint8};
  r.Add("QLinearConv", 10, kMaxOpset, q, Make<QLinearConv>());
  r.Add("QLinearMatMul", 10, kMaxOpset, q, Make<QLinearMatMul>());
}

}  // namespace tandem::cpu
