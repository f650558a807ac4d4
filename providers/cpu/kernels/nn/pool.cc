// Pooling: MaxPool (dilations, ceil_mode, optional Indices with storage_order),
// AveragePool (count_include_pad, ceil_mode), LpPool and the Global* variants.
// float32 windows run on oneDNN pooling_v2_forward, except 2x2 stride-2 unpadded max
// pooling, a direct NCHW loop (max_pool_2x2.h); Indices, integer and double inputs,
// and the ceil_mode + count_include_pad corner that oneDNN counts differently use
// reference loops. Global pools are plain reductions over the spatial block.
// With attribute channel_block = B (set by the CPU provider's blocked-layout pass,
// providers/cpu/rewrites/blocked_layout.h) float32 input and output are channel-blocked
// [N, C/B, spatial..., B] and MaxPool / AveragePool read and write that layout directly
// (2-D max pooling of channels-last values: max_pool_channels_last.h). A MaxPool with
// input_channel_block = 8 or 16 as well (after a first-layer convolution, blocked_layout.h)
// reads those blocks and writes channel_block's layout.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "graph/numeric_cast.h"
#include "providers/cpu/channel_reduction.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/channel_means.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/max_pool_2x2.h"
#include "providers/cpu/microkernels/max_pool_channels_last.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;

enum class PoolKind { kMax, kAvg, kLp };

template <typename T> struct Acc { using type = double; };
template <> struct Acc<float> { using type = float; };
template <> struct Acc<Float16> { using type = float; };
template <> struct Acc<BFloat16> { using type = float; };

// An accumulator back to T; integers saturate (a max over a window of padding only keeps
// its -DBL_MAX start, which a plain cast to an integer type would make undefined).
template <typename T>
T FromAcc(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return NumericCast<T>(v);
}

struct PoolParams {
  PoolKind kind;
  bool count_include_pad = false;
  int storage_order = 0;
  double p = 2;
};

// Reference pooling over planes [N*C, in...]; `indices` (may be null) receives MaxPool
// argmax positions as flat indices into X.
template <typename T>
void PoolRef(const T* x, T* y, int64_t* indices, int64_t planes, const Geo3& g,
             const PoolParams& prm) {
  using A = typename Acc<T>::type;
  const int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* xp = x + pl * isz;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const int64_t st[3] = {o0 * g.s[0] - g.pb[0], o1 * g.s[1] - g.pb[1],
                                 o2 * g.s[2] - g.pb[2]};
          A best = std::numeric_limits<A>::lowest();
          bool have = false;
          int64_t best_idx = 0;
          A sum = 0;
          int64_t valid = 0, padded = 0;
          for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
            const int64_t i0 = st[0] + k0 * g.d[0];
            if (i0 >= g.in[0] + g.pe[0]) break;
            for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
              const int64_t i1 = st[1] + k1 * g.d[1];
              if (i1 >= g.in[1] + g.pe[1]) break;
              for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                const int64_t i2 = st[2] + k2 * g.d[2];
                if (i2 >= g.in[2] + g.pe[2]) break;
                ++padded;  // inside input + explicit pads
                if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= g.in[0] || i1 >= g.in[1] ||
                    i2 >= g.in[2])
                  continue;
                const A v = static_cast<A>(xp[(i0 * g.in[1] + i1) * g.in[2] + i2]);
                ++valid;
                if (prm.kind == PoolKind::kMax) {
                  if (!have || v > best) {
                    best = v;
                    have = true;
                    best_idx = prm.storage_order == 0
                                   ? (i0 * g.in[1] + i1) * g.in[2] + i2
                                   : (i2 * g.in[1] + i1) * g.in[0] + i0;
                  }
                } else if (prm.kind == PoolKind::kAvg) {
                  sum += v;
                } else {
                  sum += static_cast<A>(std::pow(std::abs(static_cast<double>(v)), prm.p));
                }
              }
            }
          }
          const int64_t oi = pl * osz + (o0 * g.out[1] + o1) * g.out[2] + o2;
          if (prm.kind == PoolKind::kMax) {
            y[oi] = FromAcc<T>(best);
            if (indices) indices[oi] = pl * isz + best_idx;
          } else if (prm.kind == PoolKind::kAvg) {
            const int64_t div = prm.count_include_pad ? padded : valid;
            y[oi] = FromAcc<T>(div > 0 ? static_cast<double>(sum) / div : 0.0);
          } else {
            y[oi] = FromAcc<T>(std::pow(static_cast<double>(sum), 1.0 / prm.p));
          }
        }
  }
}

// Whether MaxPool2x2 computes this pooling (2-D, 2x2 window, stride 2, no padding).
bool IsPlainMaxPool2x2(const WindowGeometry& g, const Dims& in) {
  if (in.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i)
    if (g.kernel[i] != 2 || g.strides[i] != 2 || g.dilations[i] != 1 || g.pads_begin[i] != 0 ||
        g.out[i] * 2 > in[i])
      return false;
  return true;
}

class Pool : public Kernel {
 public:
  Pool(const KernelInfo& info, PoolKind kind)
      : node_(info.node),
        kernel_(info.node.attr_ints("kernel_shape")),
        block_(static_cast<int>(info.node.attr_int("channel_block", 0))),
        in_block_(static_cast<int>(info.node.attr_int("input_channel_block", block_))) {
    prm_.kind = kind;
    prm_.count_include_pad = info.node.attr_int("count_include_pad", 0) != 0;
    prm_.storage_order = static_cast<int>(info.node.attr_int("storage_order", 0));
    prm_.p = info.node.attr_float("p", 2.f);
  }

  absl::Status Compute(KernelContext& ctx) override {
    // The logical [N, C, spatial...] view (the same bytes when channel-blocked).
    Tensor x = *ctx.input(0);
    if (block_ != 0) {
      auto view = LogicalView(x, in_block_, 3);
      if (!view.ok()) return view.status();
      x = *std::move(view);
    }
    if (x.rank() < 3)
      return absl::InvalidArgumentError("X must have rank >= 3 (N, C, spatial...), got " +
                                        DimsToString(x.dims()));
    if (kernel_.empty()) return absl::InvalidArgumentError("attribute kernel_shape is required");
    const Dims in(x.dims().begin() + 2, x.dims().end());
    auto geo = ComputeWindowGeometry(node_, in, kernel_, true);
    if (!geo.ok()) return geo.status();
    if (in.size() > 3) return absl::UnimplementedError("pooling supports 1 to 3 spatial dims");
    Dims out_dims = {x.dim(0), x.dim(1)};
    out_dims.insert(out_dims.end(), geo->out.begin(), geo->out.end());
    Tensor& y =
        ctx.AllocateOutput(0, x.dtype(), block_ != 0 ? BlockedDims(out_dims, block_) : out_dims);
    if (block_ != 0) {  // the pass only blocks float Max/AveragePool without Indices
      if (y.numel() == 0) return absl::OkStatus();
      if (block_ == kChannelsLast && prm_.kind == PoolKind::kMax && in.size() == 2 &&
          geo->dilations == std::vector<int64_t>{1, 1}) {
        const pool_cl::Window2d win{geo->kernel[0],  geo->kernel[1],     geo->strides[0],
                                    geo->strides[1], geo->pads_begin[0], geo->pads_begin[1]};
        if (pool_cl::WindowsHitTheImage(in[0], in[1], geo->out[0], geo->out[1], win)) {
          pool_cl::MaxPool(pool_cl::Builds().best(), x.data<float>(), y.data<float>(), x.dim(0), x.dim(1),
                           in[0], in[1], geo->out[0], geo->out[1], win,
                           in_block_ == kChannelsLast ? x.dim(1) : in_block_);
          return absl::OkStatus();
        }
      }
      auto st = RunDnnl(x, y, *geo, out_dims);
      if (st.code() == absl::StatusCode::kUnimplemented)
        return absl::UnimplementedError("channel-blocked pooling that oneDNN cannot run: " +
                                        std::string(st.message()));
      return st;
    }
    const bool want_idx = prm_.kind == PoolKind::kMax && ctx.output_wanted(1);
    Tensor* idx = want_idx ? &ctx.AllocateOutput(1, DataType::kInt64, out_dims) : nullptr;
    if (y.numel() == 0) return absl::OkStatus();
    if (x.numel() == 0) return absl::InvalidArgumentError("empty input with non-empty output");
    const int64_t planes = x.dim(0) * x.dim(1);
    Geo3 g = MakeGeo3(in, geo->out, *geo);
    if (x.dtype() == DataType::kFloat && !idx && prm_.kind == PoolKind::kMax &&
        IsPlainMaxPool2x2(*geo, in)) {
      MaxPool2x2(x.data<float>(), y.data<float>(), planes, in[0], in[1]);
      return absl::OkStatus();
    }
    if (x.dtype() == DataType::kFloat && !idx && prm_.kind != PoolKind::kLp) {
      auto st = RunDnnl(x, y, *geo, out_dims);
      if (st.ok() || st.code() != absl::StatusCode::kUnimplemented) return st;
    }
    int64_t* ip = idx ? idx->data<int64_t>() : nullptr;
    switch (x.dtype()) {
      case DataType::kFloat: PoolRef(x.data<float>(), y.data<float>(), ip, planes, g, prm_); break;
      case DataType::kDouble: PoolRef(x.data<double>(), y.data<double>(), ip, planes, g, prm_); break;
      case DataType::kFloat16: PoolRef(x.data<Float16>(), y.data<Float16>(), ip, planes, g, prm_); break;
      case DataType::kBfloat16: PoolRef(x.data<BFloat16>(), y.data<BFloat16>(), ip, planes, g, prm_); break;
      case DataType::kInt8: PoolRef(x.data<int8_t>(), y.data<int8_t>(), ip, planes, g, prm_); break;
      case DataType::kUint8: PoolRef(x.data<uint8_t>(), y.data<uint8_t>(), ip, planes, g, prm_); break;
      default:
        return absl::InvalidArgumentError(std::string("unsupported element type ") +
                                          DataTypeName(x.dtype()));
    }
    return absl::OkStatus();
  }

 private:
  // oneDNN 2.6 only has a slow generic kernel for plain NC... pooling, so plain input is
  // reordered to the channel-blocked layout the jit kernels use, and the result back.
  struct Entry {
    dnnl::pooling_v2_forward prim;
    dnnl::memory::desc x_md, y_md;  // the layouts x and y are stored in
    dnnl::memory x_buf, y_buf;
    std::optional<dnnl::reorder> x_re, y_re;
  };

  // Returns Unimplemented when oneDNN cannot express this case (caller falls back).
  // x: the logical view; y_dims: y's logical dims (y is stored blocked with block_).
  absl::Status RunDnnl(const Tensor& x, Tensor& y, const WindowGeometry& geo, const Dims& y_dims) {
    const size_t n = geo.out.size();
    dnnl::memory::dims pe(n);
    bool extended = false;
    for (size_t i = 0; i < n; ++i) {
      const int64_t eff = (geo.kernel[i] - 1) * geo.dilations[i] + 1;
      const int64_t need = (geo.out[i] - 1) * geo.strides[i] + eff - x.dim(2 + i) -
                           geo.pads_begin[i];
      pe[i] = std::max(geo.pads_end[i], need);
      extended |= need > geo.pads_end[i];
    }
    // oneDNN's include-padding divisor is the full window, also over the ceil_mode tail.
    if (extended && prm_.kind == PoolKind::kAvg && prm_.count_include_pad)
      return absl::UnimplementedError("");
    try {
      Entry& e = cache_.Get({x.dims()}, [&] {
        Entry c;
        auto& eng = DnnlEngine();
        c.x_md = block_ ? BlockedDesc(x.dims(), in_block_, dt::f32) : PlainDesc(x.dims(), dt::f32);
        c.y_md = block_ ? BlockedDesc(y_dims, block_, dt::f32) : PlainDesc(y_dims, dt::f32);
        dnnl::memory::desc px = c.x_md;
        if (!block_ && x.dim(1) > 1) px = BlockedDesc(x.dims(), ChannelBlock(), dt::f32);
        auto alg = prm_.kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                   : prm_.count_include_pad    ? dnnl::algorithm::pooling_avg_include_padding
                                               : dnnl::algorithm::pooling_avg_exclude_padding;
        dnnl::memory::dims dil(geo.dilations.begin(), geo.dilations.end());
        for (auto& d : dil) d -= 1;
        dnnl::pooling_v2_forward::desc d(
            dnnl::prop_kind::forward_inference, alg, px,
            dnnl::memory::desc(c.y_md.dims(), dt::f32, dnnl::memory::format_tag::any),
            dnnl::memory::dims(geo.strides.begin(), geo.strides.end()),
            dnnl::memory::dims(geo.kernel.begin(), geo.kernel.end()), dil,
            dnnl::memory::dims(geo.pads_begin.begin(), geo.pads_begin.end()), pe);
        dnnl::pooling_v2_forward::primitive_desc pd(d, eng);
        c.prim = dnnl::pooling_v2_forward(pd);
        if (px != c.x_md) {
          c.x_buf = dnnl::memory(px, eng);
          c.x_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, c.x_md, eng, px));
        }
        if (pd.dst_desc() != c.y_md) {
          c.y_buf = dnnl::memory(pd.dst_desc(), eng);
          c.y_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, pd.dst_desc(), eng, c.y_md));
        }
        return c;
      });
      auto& strm = DnnlStream();
      dnnl::memory src = WrapTensor(x, e.x_md), dst = WrapTensor(y, e.y_md);
      if (e.x_re) {
        e.x_re->execute(strm, src, e.x_buf);
        src = e.x_buf;
      }
      e.prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, e.y_re ? e.y_buf : dst}});
      if (e.y_re) e.y_re->execute(strm, e.y_buf, dst);
      strm.wait();
    } catch (const dnnl::error& err) {
      return absl::UnimplementedError(err.what());
    }
    return absl::OkStatus();
  }

  const Node node_;  // copy: attributes are read per shape
  std::vector<int64_t> kernel_;
  int block_;     // channel_block: 0 = plain NC...; y's layout
  int in_block_;  // input_channel_block (default block_): x's layout when block_ != 0
  PoolParams prm_;
  ShapeCache<Entry> cache_;
};

template <PoolKind K>
KernelFactory MakePool() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new Pool(info, K));
  };
}

// GlobalAveragePool / GlobalMaxPool / GlobalLpPool: reduce each [N, C] plane.
template <typename T>
void GlobalRef(const T* x, T* y, int64_t planes, int64_t size, PoolKind kind, double p) {
  using A = typename Acc<T>::type;
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* xp = x + pl * size;
    if (kind == PoolKind::kMax) {
      A m = static_cast<A>(xp[0]);
      for (int64_t i = 1; i < size; ++i) m = std::max(m, static_cast<A>(xp[i]));
      y[pl] = FromAcc<T>(m);
    } else if (kind == PoolKind::kAvg) {
      A s = 0;
      for (int64_t i = 0; i < size; ++i) s += static_cast<A>(xp[i]);
      y[pl] = FromAcc<T>(static_cast<double>(s) / size);
    } else {
      double s = 0;
      for (int64_t i = 0; i < size; ++i) s += std::pow(std::abs(static_cast<double>(xp[i])), p);
      y[pl] = FromAcc<T>(std::pow(s, 1.0 / p));
    }
  }
}

// Max or sum over s < S of x[s * B + k] for k < NK (NK > 0: a fixed count the compiler
// keeps in vector registers; else nk <= 64), into y[k].
template <int64_t NK>
void PoolChannels(const float* x, float* y, int64_t S, int64_t B, int64_t nk, PoolKind kind) {
  const int64_t n = NK > 0 ? NK : nk;
  float acc[NK > 0 ? NK : 64];
  for (int64_t k = 0; k < n; ++k) acc[k] = x[k];
  if (kind == PoolKind::kMax) {
    for (int64_t s = 1; s < S; ++s)
      for (int64_t k = 0; k < n; ++k) acc[k] = std::max(acc[k], x[s * B + k]);
  } else {
    for (int64_t s = 1; s < S; ++s)
      for (int64_t k = 0; k < n; ++k) acc[k] += x[s * B + k];
  }
  for (int64_t k = 0; k < n; ++k) y[k] = acc[k];
}

// Global max/average pooling of channel-blocked float x [N, C/B, S, B] into y [N, C/B, B],
// up to 64 channels of a block per task (each pixel's 256 bytes read in a row).
void GlobalPoolBlocked(const float* x, float* y, int64_t outer, int64_t S, int64_t B, PoolKind kind, int threads) {
  constexpr int64_t kChunk = 64;
  const bool max = kind == PoolKind::kMax;
  ReduceChannelBlocks(
      outer, S, B, kChunk, threads, y,
      [&](int64_t o, int64_t k0, int64_t nk, int64_t s0, int64_t len, float* out) {
        const float* xo = x + (o * S + s0) * B + k0;
        if (nk == kChunk) {
          PoolChannels<kChunk>(xo, out, len, B, nk, kind);
        } else {
          PoolChannels<0>(xo, out, len, B, nk, kind);
        }
      },
      [max](float a, float b) { return max ? std::max(a, b) : a + b; },
      [max](float v, int64_t S) { return max ? v : v / static_cast<float>(S); });
}

class GlobalPool : public Kernel {
 public:
  GlobalPool(const KernelInfo& info, PoolKind kind)
      : kind_(kind),
        p_(info.node.attr_float("p", 2.f)),
        block_(static_cast<int>(info.node.attr_int("channel_block", 0))) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (block_ != 0) return ComputeBlocked(ctx, x);
    if (x.rank() < 2)
      return absl::InvalidArgumentError("X must have rank >= 2, got " + DimsToString(x.dims()));
    Dims out = x.dims();
    for (int i = 2; i < x.rank(); ++i) out[i] = 1;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
    if (y.numel() == 0) return absl::OkStatus();
    const int64_t size = DimProduct(x.dims(), 2, x.rank());
    if (size == 0) return absl::InvalidArgumentError("empty spatial extent");
    const int64_t planes = x.dim(0) * x.dim(1);
    switch (x.dtype()) {
      case DataType::kFloat: GlobalRef(x.data<float>(), y.data<float>(), planes, size, kind_, p_); break;
      case DataType::kDouble: GlobalRef(x.data<double>(), y.data<double>(), planes, size, kind_, p_); break;
      case DataType::kFloat16: GlobalRef(x.data<Float16>(), y.data<Float16>(), planes, size, kind_, p_); break;
      case DataType::kBfloat16: GlobalRef(x.data<BFloat16>(), y.data<BFloat16>(), planes, size, kind_, p_); break;
      default:
        return absl::InvalidArgumentError(std::string("unsupported element type ") +
                                          DataTypeName(x.dtype()));
    }
    return absl::OkStatus();
  }

 private:
  // channel_block B (float Max/Average only): x [N, C/B, spatial..., B] -> y [N, C/B, 1..., B].
  absl::Status ComputeBlocked(KernelContext& ctx, const Tensor& x) {
    if (auto view = LogicalView(x, block_, 3); !view.ok()) return view.status();
    if (x.dtype() != DataType::kFloat || kind_ == PoolKind::kLp)
      return absl::InvalidArgumentError("channel-blocked global pooling is for float32 Max/Average");
    Dims out = x.dims();
    for (int i = 2; i < x.rank() - 1; ++i) out[i] = 1;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
    const int64_t S = DimProduct(x.dims(), 2, x.rank() - 1);
    if (y.numel() == 0) return absl::OkStatus();
    if (S == 0) return absl::InvalidArgumentError("empty spatial extent");
    GlobalPoolBlocked(x.data<float>(), y.data<float>(), x.dim(0) * x.dim(1), S, x.dims().back(), kind_,
                      ctx.num_threads());
    return absl::OkStatus();
  }

  PoolKind kind_;
  double p_;
  int block_;  // channel_block: 0 = plain NC...
};

template <PoolKind K>
KernelFactory MakeGlobalPool() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new GlobalPool(info, K));
  };
}

}  // namespace

void ChannelMeansBlocked(const float* x, float* y, int64_t outer, int64_t S, int64_t B, int threads) {
  GlobalPoolBlocked(x, y, outer, S, B, PoolKind::kAvg, threads);
}

void RegisterPoolKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat, DataType::kDouble, DataType::kFloat16,
                                   DataType::kBfloat16};
  std::vector<DataType> f8 = f;
  f8.push_back(DataType::kInt8);
  f8.push_back(DataType::kUint8);
  // MaxPool: 8 added storage_order and Indices; 10 dilations and ceil_mode; 11 pads
  // clarifications; 12 int8/uint8. Attributes absent in older opsets read as defaults.
  auto max = MakePool<PoolKind::kMax>();
  r.Add("MaxPool", 1, 7, f, max);
  r.Add("MaxPool", 8, 9, f, max);
  r.Add("MaxPool", 10, 10, f, max);
  r.Add("MaxPool", 11, 11, f, max);
  r.Add("MaxPool", 12, kMaxOpset, f8, max);
  // AveragePool: 7 count_include_pad; 10 ceil_mode; 11 pads; 19 dilations.
  auto avg = MakePool<PoolKind::kAvg>();
  r.Add("AveragePool", 1, 6, f, avg);
  r.Add("AveragePool", 7, 9, f, avg);
  r.Add("AveragePool", 10, 10, f, avg);
  r.Add("AveragePool", 11, 18, f, avg);
  r.Add("AveragePool", 19, kMaxOpset, f, avg);
  // LpPool: p was a float at 1 and an int from 2; 18 ceil_mode and dilations.
  auto lp = MakePool<PoolKind::kLp>();
  r.Add("LpPool", 1, 1, f, lp);
  r.Add("LpPool", 2, 10, f, lp);
  r.Add("LpPool", 11, 17, f, lp);
  r.Add("LpPool", 18, kMaxOpset, f, lp);
  r.Add("GlobalAveragePool", 1, kMaxOpset, f, MakeGlobalPool<PoolKind::kAvg>());
  r.Add("GlobalMaxPool", 1, kMaxOpset, f, MakeGlobalPool<PoolKind::kMax>());
  r.Add("GlobalLpPool", 1, 1, f, MakeGlobalPool<PoolKind::kLp>());
  r.Add("GlobalLpPool", 2, kMaxOpset, f, MakeGlobalPool<PoolKind::kLp>());
}

}  // namespace tandem::cpu
