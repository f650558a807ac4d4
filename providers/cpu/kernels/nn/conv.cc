// Conv and ConvTranspose (1-D/2-D/3-D, groups, dilations, strides, pads, auto_pad), and
// FusedConv (ai.tandem, from optimizer/activation_fusion.h): Conv + activation [+ 2x2 max pool],
// or + a residual sum (input 3) [+ Relu] (providers/cpu/rewrites/conv_sum.h).
// float32 runs on oneDNN convolution_forward / deconvolution_forward with format_tag::any
// layouts: inputs are reordered into the layouts oneDNN prefers and the result back to
// plain NC..., and weights that are initializers are reordered once and kept (one copy per
// initializer and layout in the process: packed_weights.h). float16 and
// bfloat16 go through float32; double (and cases oneDNN rejects, such as the negative
// padding ConvTranspose uses for output_shape larger than the natural size) use
// reference loops.
// With attribute channel_block = B (FusedConv from the CPU provider's blocked-layout pass,
// providers/cpu/rewrites/blocked_layout.h) y is written channel-blocked, [N, M/B, H, W, B], the
// layout oneDNN computes in, and x may arrive that way too (then it has one dimension
// more than W): no reorders between the convolutions of a chain. B may be kChannelsLast
// (providers/cpu/channel_block.h). blocked_output = 0 (output channels no block divides)
// keeps y plain while x may still arrive blocked.
// Channels-last 3x3 convolutions on small maps with megabytes of weights (resnet's last
// stage at batch 1) run on Tandem's own loops instead, which stream the weights in behind
// the arithmetic (providers/cpu/microkernels/small_map_conv.h).
// A channel Scale (input 4, one image: a squeeze-and-excitation gate folded in by
// providers/cpu/rewrites/conv_input_scale.h) multiplies the weights on each call, in the
// layout oneDNN reads (conv_weight_scale.h). Swish runs as Tandem's own pass after the
// convolution (providers/cpu/microkernels/swish.h) rather than as oneDNN's post-op. The
// optional output Mean, the GlobalAveragePool of Y in Y's layout (a squeeze-and-excitation
// pool folded in by providers/cpu/rewrites/conv_mean.h), is taken by that pass on its way,
// else by a pass over Y (channel_means.h). A convolution of one input channel per group
// and several outputs each runs as a depthwise one of the channels repeated (repeat_channels.h).
// A 1x1 convolution of one-pixel maps at a batch of a few runs as a product with the packed
// weights (microkernels/skinny_gemm.h), in any layout (one pixel: the same bytes).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "providers/cpu/dnnl_util.h"
#include "framework/env_switch.h"
#include "providers/cpu/host_memory.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/channel_means.h"
#include "providers/cpu/kernels/nn/conv_weight_scale.h"
#include "providers/cpu/kernels/nn/repeat_channels.h"
#include "providers/cpu/kernels/quantization/conv_columns.h"
#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/fused_activation.h"
#include "providers/cpu/microkernels/max_pool_2x2.h"
#include "providers/cpu/microkernels/skinny_gemm.h"
#include "providers/cpu/microkernels/small_map_conv.h"
#include "providers/cpu/microkernels/swish.h"
#include "providers/cpu/packed_weights.h"
#include "providers/cpu/rewrites/conv_sum.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBfloat16; }

void StoreFromFloat(const Tensor& src, Tensor& out) {
  const float* s = src.data<float>();
  const int64_t n = out.numel();
  if (out.dtype() == DataType::kFloat16) {
    for (int64_t i = 0; i < n; ++i) out.data<Float16>()[i] = Float16(s[i]);
  } else if (out.dtype() == DataType::kBfloat16) {
    for (int64_t i = 0; i < n; ++i) out.data<BFloat16>()[i] = BFloat16(s[i]);
  }
}

// y[n, m, o] = b[m] + sum_{c, k} x[n, g*Cg + c, o*s + k*d - p] * w[m, c, k]
template <typename T>
void ConvRef(const T* x, const T* w, const T* b, T* y, int64_t N, int64_t C, int64_t M,
             int64_t G, const Geo3& g) {
  const int64_t Cg = C / G, Mg = M / G, isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t gi = m / Mg;
      T* yc = y + (n * M + m) * osz;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            T acc = b ? b[m] : T(0);
            for (int64_t c = 0; c < Cg; ++c) {
              const T* xc = x + (n * C + gi * Cg + c) * isz;
              const T* wc = w + (m * Cg + c) * ksz;
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                const int64_t i0 = o0 * g.s[0] + k0 * g.d[0] - g.pb[0];
                if (i0 < 0 || i0 >= g.in[0]) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  const int64_t i1 = o1 * g.s[1] + k1 * g.d[1] - g.pb[1];
                  if (i1 < 0 || i1 >= g.in[1]) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t i2 = o2 * g.s[2] + k2 * g.d[2] - g.pb[2];
                    if (i2 < 0 || i2 >= g.in[2]) continue;
                    acc += xc[(i0 * g.in[1] + i1) * g.in[2] + i2] *
                           wc[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
            }
            yc[(o0 * g.out[1] + o1) * g.out[2] + o2] = acc;
          }
    }
}

// Transposed convolution: scatters x[n, c, i] * w[c, m, k] into y[n, m, i*s + k*d - p].
// Here Geo3::in/out are the ConvTranspose input/output sizes and p the (maybe negative)
// begin padding.
template <typename T>
void ConvTransposeRef(const T* x, const T* w, const T* b, T* y, int64_t N, int64_t C,
                      int64_t M, int64_t G, const Geo3& g) {
  const int64_t Cg = C / G, Mg = M / G, isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      T* yc = y + (n * M + m) * osz;
      for (int64_t i = 0; i < osz; ++i) yc[i] = b ? b[m] : T(0);
    }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t gi = c / Cg;
      const T* xc = x + (n * C + c) * isz;
      for (int64_t mo = 0; mo < Mg; ++mo) {
        const T* wc = w + (c * Mg + mo) * ksz;
        T* yc = y + (n * M + gi * Mg + mo) * osz;
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < g.in[2]; ++i2) {
              const T xv = xc[(i0 * g.in[1] + i1) * g.in[2] + i2];
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                const int64_t o0 = i0 * g.s[0] + k0 * g.d[0] - g.pb[0];
                if (o0 < 0 || o0 >= g.out[0]) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  const int64_t o1 = i1 * g.s[1] + k1 * g.d[1] - g.pb[1];
                  if (o1 < 0 || o1 >= g.out[1]) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t o2 = i2 * g.s[2] + k2 * g.d[2] - g.pb[2];
                    if (o2 < 0 || o2 >= g.out[2]) continue;
                    yc[(o0 * g.out[1] + o1) * g.out[2] + o2] +=
                        xv * wc[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
            }
      }
    }
}

// A oneDNN (de)convolution with its layout plumbing, cached per input shapes. With
// `pool` (FusedConv with a fused 2x2 max pool) the result stays in y_buf and is pooled
// from there straight into the output, `images` images at a time, so that y_buf is
// pooled while it is still in the cache (the descriptors are for that many images).
struct DnnlConv {
  int64_t images = 0;  // images per primitive call (0: x's whole batch)
  dnnl::primitive prim;
  dnnl::memory::desc x_md, w_md, b_md, y_md;  // layouts the tensors are stored in (y: unpooled)
  dnnl::memory x_buf, w_buf, y_buf;           // primitive-layout buffers where they differ
  HostBuffer x_mem, w_mem, y_mem, pool_mem;   // their storage and y_pool_src's (host_memory.h)
  std::optional<dnnl::reorder> x_re, w_re, y_re;
  std::optional<dnnl::reorder> sum_re;  // with sum and y_re: y (holding s) into y_buf
  // The layout the primitive reads weights in, where it is not w_md's: constant weights are
  // packed into it once (w_packed), others reordered into w_buf by w_re on every call.
  std::optional<dnnl::memory::desc> w_want;
  std::shared_ptr<const PackedCopy> w_packed;
  // With a channel scale (PointScaledWeights): this call's scaled weights in the primitive's
  // layout, and where they are scaled plain first, that copy; inner_block: OutputInnerBlock.
  dnnl::memory scaled_w, scaled_plain;
  HostBuffer scaled_plain_mem;
  int inner_block = 0;
  bool pool = false;
  bool sum = false;  // a sum post-op: the primitive adds onto what its dst holds
  int out_block = 0;  // with pool: channel block of the pooled output (0 = plain)
  int y_block = 1;    // with pool: channel block of what is pooled from (1 = plain; may be kChannelsLast)
  dnnl::memory y_pool_src;  // with pool, where y_buf's layout is not poolable: reordered
  // Kept across calls and pointed at each call's tensors (x_md, w_md, b_md, y_md), and the
  // primitive's arguments, built by Init from them and the buffers above.
  dnnl::memory x_view, w_view, b_view, y_view;
  std::unordered_map<int, dnnl::memory> args;

  // Finishes setup from the primitive descriptor's chosen layouts.
  void Init(const dnnl::primitive_desc& pd, const dnnl::memory::desc& px,
            const dnnl::memory::desc& pw, const dnnl::memory::desc& py) {
    auto& eng = DnnlEngine();
    x_view = UnboundMemory(x_md);
    w_view = UnboundMemory(w_md);
    y_view = UnboundMemory(y_md);
    if (!b_md.is_zero()) b_view = UnboundMemory(b_md);
    if (px != x_md) {
      x_buf = HostMemory(px, x_mem);
      x_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, x_md, eng, px));
    }
    if (pw != w_md) w_want = pw;
    if (py != y_md || pool) y_buf = HostMemory(py, y_mem);
    args = {{DNNL_ARG_SRC, x_re ? x_buf : x_view}, {DNNL_ARG_WEIGHTS, w_view}, {DNNL_ARG_DST, y_buf ? y_buf : y_view}};
    if (b_view) args[DNNL_ARG_BIAS] = b_view;
    if (!pool) {
      if (py != y_md) y_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, py, eng, y_md));
      if (sum && y_re) sum_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, y_md, eng, py));
      return;
    }
    const auto d = py.dims();
    const Dims dims(d.begin(), d.end());
    auto blocked_by = [&](int b) {
      return dims.size() == 4 && dims[1] % b == 0 && py == BlockedDesc(dims, b, dt::f32);
    };
    // The pool reads plain or 8/16-blocked and writes plain, reads and writes out_block, or
    // reads 8/16-blocked and writes channels-last.
    if (out_block ? blocked_by(out_block) : py == PlainDesc(dims, dt::f32)) {
      y_block = out_block ? out_block : 1;
    } else if ((!out_block || out_block == kChannelsLast) && (blocked_by(8) || blocked_by(16))) {
      y_block = blocked_by(8) ? 8 : 16;
    } else {
      const auto src_md = out_block ? BlockedDesc(dims, out_block, dt::f32) : PlainDesc(dims, dt::f32);
      y_block = out_block ? out_block : 1;
      y_pool_src = HostMemory(src_md, pool_mem);
      y_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, py, eng, src_md));
    }
  }

  // With a channel scale s (FusedConv's Scale): points the weights argument at W * s for
  // this call, in the primitive's layout. Where that layout has the output channels
  // innermost (OutputInnerBlock: oneDNN's 1x1 kernels), constant W is packed once and each
  // call scales the packed copy into scaled_w in one pass; else W is scaled in its own
  // layout and reordered (oneDNN's reorders into these layouts take ~1-2 ns a value).
  void PointScaledWeights(const Tensor& w, bool w_constant, const float* s) {
    const int64_t O = w.dim(0), C = w.dim(1), taps = w.numel() / (O * C);
    const dnnl::memory::desc want = w_want ? *w_want : w_md;
    if (scaled_w.get(true) == nullptr) {
      scaled_w = HostMemory(want, w_mem);
      inner_block = w_constant ? OutputInnerBlock(want, w_md.dims()) : 0;
      if (inner_block) w_packed = PackConstantWeights(w, w_md, want);
      if (!inner_block && w_want) {
        scaled_plain = HostMemory(w_md, scaled_plain_mem);
        w_re = dnnl::reorder(dnnl::reorder::primitive_desc(DnnlEngine(), w_md, DnnlEngine(), want));
      }
      args[DNNL_ARG_WEIGHTS] = scaled_w;
    }
    float* out = static_cast<float*>(scaled_w.get_data_handle());
    if (inner_block) {
      ScaleInnerBlockedWeights(static_cast<const float*>(w_packed->memory.get_data_handle()), s,
                               (O + inner_block - 1) / inner_block, C, taps, inner_block, out);
    } else if (w_re) {
      ScalePlainWeights(w.data<float>(), s, O, C, taps, static_cast<float*>(scaled_plain.get_data_handle()));
      w_re->execute(DnnlStream(), scaled_plain, scaled_w);
    } else {
      ScalePlainWeights(w.data<float>(), s, O, C, taps, out);
    }
  }

  // Points the weights argument at w, or at its copy in the primitive's layout.
  void PointWeights(const Tensor& w, bool w_constant) {
    if (!w_want) {
      PointAt(w_view, w.raw());
    } else if (w_constant) {
      if (!w_packed) {
        w_packed = PackConstantWeights(w, w_md, *w_want);
        args[DNNL_ARG_WEIGHTS] = w_packed->memory;
      }
    } else {
      if (!w_re) {
        auto& eng = DnnlEngine();
        w_buf = HostMemory(*w_want, w_mem);
        w_re = dnnl::reorder(dnnl::reorder::primitive_desc(eng, w_md, eng, *w_want));
        args[DNNL_ARG_WEIGHTS] = w_buf;
      }
      PointAt(w_view, w.raw());
      w_re->execute(DnnlStream(), w_view, w_buf);
    }
  }

  // With pool: `images` images of y (pooled; channel-blocked by out_block, else plain) from
  // y_buf into out.
  void PoolInto(float* out) {
    const auto d = y_md.dims();
    const float* src = static_cast<const float*>(y_buf.get_data_handle());
    if (y_re) {
      y_re->execute(DnnlStream(), y_buf, y_pool_src);
      DnnlStream().wait();
      src = static_cast<const float*>(y_pool_src.get_data_handle());
    }
    const int64_t C = d[1], H = d[2], W = d[3];  // logical dims, whatever the layout
    if (y_block == kChannelsLast) {
      MaxPool2x2ChannelsLast(src, out, d[0], C, H, W);
    } else if (y_block == 8) {
      PoolFromBlocks<8>(src, out, d[0], C, H, W);
    } else if (y_block == 16) {
      PoolFromBlocks<16>(src, out, d[0], C, H, W);
    } else {
      MaxPool2x2(src, out, d[0] * C, H, W);
    }
  }

  template <int B>
  void PoolFromBlocks(const float* src, float* out, int64_t N, int64_t C, int64_t H, int64_t W) const {
    if (out_block == kChannelsLast) {
      MaxPool2x2FromBlocked<B, PoolOut::kChannelsLast>(src, out, N, C, H, W);
    } else if (out_block) {
      MaxPool2x2FromBlocked<B, PoolOut::kSameBlocks>(src, out, N, C, H, W);
    } else {
      MaxPool2x2FromBlocked<B, PoolOut::kPlain>(src, out, N, C, H, W);
    }
  }

  // y = Conv(x, w) (+ b, post-ops); with `scale`, Conv(x * scale, w) for one image.
  void Run(const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y, bool w_constant, const float* scale) {
    auto& s = DnnlStream();
    if (scale)
      PointScaledWeights(w, w_constant, scale);
    else
      PointWeights(w, w_constant);
    if (b) PointAt(b_view, b->raw());
    // Every layout here keeps each image's values together, image after image.
    const int64_t batch = x.dim(0), x_image = x.numel() / batch, y_image = y.numel() / batch;
    const int64_t step = images > 0 ? images : batch;
    for (int64_t n = 0; n < batch; n += step) {
      PointAt(x_view, x.data<float>() + n * x_image);
      if (x_re) x_re->execute(s, x_view, x_buf);
      float* y_at = y.data<float>() + n * y_image;
      PointAt(y_view, y_at);
      if (sum_re) sum_re->execute(s, y_view, y_buf);
      prim.execute(s, args);
      if (y_re && !pool) y_re->execute(s, y_buf, y_view);
      s.wait();
      if (pool) PoolInto(y_at);
    }
  }
};

std::atomic<int64_t> sums_in_place{0};

// Images per convolution call before a fused pool: as many as keep the unpooled result
// (`image_bytes` each) within about half a core's L2 (1 MiB), taken as a divisor of the
// batch; the whole batch when no divisor comes close (a prime batch size).
int64_t PoolImages(int64_t batch, int64_t image_bytes) {
  const int64_t target = std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, image_bytes));
  if (batch <= target) return batch;
  for (int64_t k = target; k >= 1; --k)
    if (batch % k == 0) return 2 * k >= target ? k : batch;
  return batch;
}

dnnl::memory::dims Sub1(const std::vector<int64_t>& v) {
  dnnl::memory::dims r(v.begin(), v.end());
  for (auto& x : r) x -= 1;
  return r;
}

// Shape checks shared by Conv, ConvTranspose and ConvInteger (whose X and W may differ in
// type: `types_match` is checked after the ranks); returns the kernel spatial shape.
absl::StatusOr<std::vector<int64_t>> CheckConvShapes(const Node& node, const Dims& x, const Dims& w,
                                                     const Dims* b, bool types_match, int64_t group,
                                                     bool transpose) {
  if (x.size() < 3)
    return absl::InvalidArgumentError("X must have rank >= 3 (N, C, spatial...), got " + DimsToString(x));
  if (w.size() != x.size())
    return absl::InvalidArgumentError("W has shape " + DimsToString(w) + ", expected rank " +
                                      std::to_string(x.size()));
  if (!types_match) return absl::InvalidArgumentError("X, W and B must have the same element type");
  if (group <= 0) return absl::InvalidArgumentError("group must be positive");
  const int64_t C = x[1];
  if (C % group != 0)
    return absl::InvalidArgumentError("input channels " + std::to_string(C) +
                                      " are not divisible by group " + std::to_string(group));
  if (!transpose) {
    if (w[1] * group != C || w[0] % group != 0)
      return absl::InvalidArgumentError("W of shape " + DimsToString(w) + " does not fit " +
                                        std::to_string(C) + " input channels in " +
                                        std::to_string(group) + " groups");
  } else if (w[0] != C) {
    return absl::InvalidArgumentError("W of shape " + DimsToString(w) + " does not fit " +
                                      std::to_string(C) + " input channels");
  }
  const int64_t M = transpose ? w[1] * group : w[0];
  if (b && (b->size() != 1 || (*b)[0] != M))
    return absl::InvalidArgumentError("B has shape " + DimsToString(*b) + ", expected [" +
                                      std::to_string(M) + "]");
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  std::vector<int64_t> ks = node.attr_ints("kernel_shape", kernel);
  if (ks != kernel)
    return absl::InvalidArgumentError("kernel_shape " + DimsToString(ks) +
                                      " does not match W of shape " + DimsToString(w));
  return kernel;
}

// The same for tensors of one element type (Conv, ConvTranspose).
absl::StatusOr<std::vector<int64_t>> CheckConvInputs(const Node& node, const Tensor& x,
                                                     const Tensor& w, const Tensor* b,
                                                     int64_t group, bool transpose) {
  const bool types_match = x.dtype() == w.dtype() && (!b || b->dtype() == x.dtype());
  return CheckConvShapes(node, x.dims(), w.dims(), b ? &b->dims() : nullptr, types_match, group, transpose);
}

// Runs f on float views of x/w/b/y: directly for float, through float copies for halves.
template <typename F>
absl::Status AsFloat(const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y, F&& f) {
  if (!IsHalf(x.dtype())) return f(x, w, b, y);
  Tensor xf = x.CastTo(DataType::kFloat), wf = w.CastTo(DataType::kFloat), bf;
  if (b) bf = b->CastTo(DataType::kFloat);
  Tensor yf = Tensor::Host(DataType::kFloat, y.dims());
  auto st = f(xf, wf, b ? &bf : nullptr, yf);
  if (st.ok()) StoreFromFloat(yf, y);
  return st;
}

// Conv, and FusedConv (ai.tandem): a Conv with an activation applied to its output and,
// with attribute pool = "MaxPool2x2", a 2x2 stride-2 max pool after that (optimizer/activation_fusion.h).
class Conv : public Kernel {
 public:
  explicit Conv(const KernelInfo& info)
      : node_(info.node),
        group_(info.node.attr_int("group", 1)),
        scale_(info.node.has_input(4)),
        w_constant_(info.constant_input(1) != nullptr),
        act_(info.node),
        pool_(info.node.attr_string("pool", "") == "MaxPool2x2"),
        block_(static_cast<int>(info.node.attr_int("channel_block", 0))),
        out_blocked_(block_ != 0 && info.node.attr_int("blocked_output", 1) != 0),
        sum_(info.node.has_input(3)),
        sum_in_place_(info.node.attr_int("sum_in_place", 0) != 0),
        sum_act_(info.node, "sum_activation"),
        own_swish_(act_.swish() && !pool_ && !sum_ && !SwitchedOff("TANDEM_CPU_OWN_SWISH")),
        means_(info.node.has_output(1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x_in = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input(2);
    // Channel-blocked x has one dimension more than W; its logical view has the same bytes.
    const bool x_blocked = block_ != 0 && x_in.rank() == w.rank() + 1;
    Tensor x = x_in;
    if (x_blocked) {
      auto view = LogicalView(x_in, block_, 3);
      if (!view.ok()) return view.status();
      x = *std::move(view);
    }
    if (auto st = CheckShapes(x, w, b, x_blocked); !st.ok()) return st;
    const float* scale = nullptr;  // with scale_: one value per channel of X
    if (scale_) {
      if (auto st = CheckScale(w, ctx.input(4), x); !st.ok()) return st;
      scale = ctx.input(4)->data<float>();
    }
    const WindowGeometry* geo = &shapes_.geo;
    const Dims in(x.dims().begin() + 2, x.dims().end());
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    Dims out_dims = {N, M};
    out_dims.insert(out_dims.end(), geo->out.begin(), geo->out.end());
    if (pool_ && (in.size() != 2 || x.dtype() != DataType::kFloat))
      return absl::InvalidArgumentError("a fused pool needs float input with 2 spatial dims");
    if (block_ != 0 && (in.size() != 2 || x.dtype() != DataType::kFloat ||
                        (out_blocked_ && block_ != kChannelsLast && M % block_ != 0) || (pool_ && !out_blocked_)))
      return absl::InvalidArgumentError("channel-blocked output needs float input with 2 spatial "
                                        "dims and output channels divisible by " +
                                        std::to_string(block_));
    Dims y_dims = pool_ ? Dims{N, M, out_dims[2] / 2, out_dims[3] / 2} : out_dims;
    const Dims stored = out_blocked_ ? BlockedDims(y_dims, block_) : y_dims;
    Tensor y_sum;
    if (sum_) {
      auto st = SumOutput(ctx, x_in, stored, y_sum);
      if (!st.ok()) return st;
    }
    Tensor& y = sum_ ? y_sum : ctx.AllocateOutput(0, x.dtype(), stored);
    const bool use_dnnl = x.numel() > 0 && w.numel() > 0;
    std::optional<Means> means;
    if (means_) {
      if (x.dtype() != DataType::kFloat || !use_dnnl || pool_ || y.numel() == 0)
        return absl::InvalidArgumentError(node_.Describe() + ": the channel means (output 1) need a float32 "
                                          "convolution of non-empty X and W without a fused pool, and a non-empty Y");
      means = MeansOf(ctx, y_dims, stored);
    }
    if (y.numel() == 0) return absl::OkStatus();
    if (in.size() > 3)
      return absl::UnimplementedError("Conv supports 1 to 3 spatial dimensions");
    if (!means && IsPointProduct(x, w, b, *geo)) {
      // [N, C] x W[M, C]^T: the same bytes in every layout when each map is one pixel
      point_weights_.Get(w, /*trans_b=*/true, w.dim(1), w.dim(0))
          .Multiply(x.data<float>(), static_cast<int>(N), 1.f, b ? b->data<float>() : nullptr, 1.f, y.data<float>(),
                    ctx.num_threads());
      act_.Apply(y.data<float>(), y.numel());
      return absl::OkStatus();
    }
    if (sum_ && (!use_dnnl || x.dtype() != DataType::kFloat))
      return absl::InvalidArgumentError("a residual sum needs a float32 convolution of a non-empty X and W");
    if (block_ != 0) {
      if (!use_dnnl) return absl::InvalidArgumentError("channel-blocked Conv of an empty X or W");
      if (auto s = SmallMapShape(x, w, b, *geo, x_blocked, ctx.num_threads())) {
        small_map::Run(*s, x.data<float>(), small_map_weights_.Get(w, s->m, s->c), b ? b->data<float>() : nullptr,
                       act_, sum_, sum_act_, y.data<float>(), ctx.num_threads());
        if (means) ChannelMeansBlocked(y.data<float>(), means->data, means->outer, means->S, means->B, means->threads);
        return absl::OkStatus();
      }
      return RunDnnl(x, w, b, y, *geo, out_dims, x_blocked, scale, means ? &*means : nullptr);
    }
    if (pool_ && !use_dnnl) {  // reference conv into a temporary, then pool
      Tensor full = Tensor::Host(DataType::kFloat, out_dims);
      ConvRef(x.data<float>(), w.data<float>(), b ? b->data<float>() : nullptr,
              full.data<float>(), N, C, M, group_, MakeGeo3(in, geo->out, *geo));
      act_.Apply(full.data<float>(), full.numel());
      MaxPool2x2(full.data<float>(), y.data<float>(), N * M, out_dims[2], out_dims[3]);
      return absl::OkStatus();
    }
    if (x.dtype() == DataType::kDouble || !use_dnnl) {
      auto ref = [&](const Tensor& xx, const Tensor& ww, const Tensor* bb, Tensor& yy) {
        const Geo3 g = MakeGeo3(in, geo->out, *geo);
        if (xx.dtype() == DataType::kDouble)
          ConvRef(xx.data<double>(), ww.data<double>(), bb ? bb->data<double>() : nullptr,
                  yy.data<double>(), N, C, M, group_, g);
        else
          ConvRef(xx.data<float>(), ww.data<float>(), bb ? bb->data<float>() : nullptr,
                  yy.data<float>(), N, C, M, group_, g);
        if (yy.dtype() == DataType::kFloat) act_.Apply(yy.data<float>(), yy.numel());
        return absl::OkStatus();
      };
      return AsFloat(x, w, b, y, ref);
    }
    return AsFloat(x, w, b, y, [&](const Tensor& xx, const Tensor& ww, const Tensor* bb,
                                   Tensor& yy) {
      return RunDnnl(xx, ww, bb, yy, *geo, out_dims, false, scale, means ? &*means : nullptr);
    });
  }

 private:
  // Where output 1, Y's channel means, goes: [outer, B] for Y stored as [outer, S, B].
  struct Means {
    float* data;
    int64_t outer, S, B;
    int threads;
  };

  // Allocates output 1 in Y's layout: the stored dims with 1 for every pixel dim (a blocked
  // [N, C/B, H, W, B] gives [N, C/B, 1, 1, B], a plain [N, C, H, W] gives [N, C, 1, 1]).
  Means MeansOf(KernelContext& ctx, const Dims& y_dims, const Dims& stored) const {
    Dims dims = stored;
    const size_t pixel_end = out_blocked_ ? dims.size() - 1 : dims.size();
    for (size_t i = 2; i < pixel_end; ++i) dims[i] = 1;
    Tensor& m = ctx.AllocateOutput(1, DataType::kFloat, dims);
    const int64_t B = out_blocked_ ? stored.back() : 1;
    return {m.data<float>(), m.numel() / B, DimProduct(y_dims, 2, static_cast<int>(y_dims.size())), B, ctx.num_threads()};
  }

  // What one call's shapes determine, kept for the next call of the same shapes and types
  // (every call at a fixed batch size): the checks passed, the window geometry, and the
  // oneDNN convolution for them once RunDnnl has found it.
  struct CheckedShapes {
    bool valid = false;
    Dims x, w, b;  // b: {-1} without a bias
    DataType x_type = DataType::kUndefined, w_type = DataType::kUndefined, b_type = DataType::kUndefined;
    bool x_blocked = false;
    WindowGeometry geo;
    DnnlConv* dnnl = nullptr;
  };

  // Checks x, w and b (CheckConvInputs) and computes the window geometry into shapes_,
  // unless the last call had the same shapes and types.
  absl::Status CheckShapes(const Tensor& x, const Tensor& w, const Tensor* b, bool x_blocked) {
    static const Dims kNoBias = {-1};
    const Dims& b_dims = b ? b->dims() : kNoBias;
    const DataType b_type = b ? b->dtype() : DataType::kUndefined;
    CheckedShapes& c = shapes_;
    if (c.valid && c.x == x.dims() && c.w == w.dims() && c.b == b_dims && c.x_type == x.dtype() &&
        c.w_type == w.dtype() && c.b_type == b_type && c.x_blocked == x_blocked)
      return absl::OkStatus();
    c = CheckedShapes();
    auto kernel = CheckConvInputs(node_, x, w, b, group_, false);
    if (!kernel.ok()) return kernel.status();
    const Dims in(x.dims().begin() + 2, x.dims().end());
    auto geo = ComputeWindowGeometry(node_, in, *kernel, false);
    if (!geo.ok()) return geo.status();
    c = {true, x.dims(), w.dims(), b_dims, x.dtype(), w.dtype(), b_type, x_blocked, *std::move(geo), nullptr};
    return absl::OkStatus();
  }

  // Scale (input 4) can scale this call's weights: float32, one value per channel of X's
  // single image (however its 1x1 map is blocked), one group.
  absl::Status CheckScale(const Tensor& w, const Tensor* s, const Tensor& x) const {
    const int64_t C = x.dim(1);
    if (s && s->dtype() == DataType::kFloat && w.dtype() == DataType::kFloat && x.dtype() == DataType::kFloat &&
        x.dim(0) == 1 && group_ == 1 && s->numel() == C && w.dim(1) == C && x.numel() > 0 && w.numel() > 0)
      return absl::OkStatus();
    return absl::InvalidArgumentError(
        node_.Describe() + ": a channel Scale needs non-empty float32 X of one image, W, one group and one Scale "
        "value per input channel; got X " + DimsToString(x.dims()) + ", W " + DimsToString(w.dims()) + ", group " +
        std::to_string(group_) + ", Scale " + (s ? DimsToString(s->dims()) : std::string("none")));
  }

  // The output of a residual sum, holding s before the convolution adds onto it: s's own
  // buffer when the pass allowed it (sum_in_place) and nothing else shares that buffer now
  // (not even the convolution's input), else a copy of s.
  absl::Status SumOutput(KernelContext& ctx, const Tensor& x, const Dims& stored, Tensor& y) {
    const Tensor* s = ctx.input(3);
    if (!s || s->dtype() != DataType::kFloat || s->dims() != stored)
      return absl::InvalidArgumentError("the residual sum input must be float32 of shape " + DimsToString(stored) +
                                        ", got " + (s ? DimsToString(s->dims()) : std::string("none")));
    if (pool_) return absl::InvalidArgumentError("a residual sum after a fused pool");
    if (sum_in_place_ && s->buffer() && s->buffer().use_count() == 1 && s->buffer() != x.buffer()) {
      y = *s;
      ctx.SetOutput(0, y);
      sums_in_place.fetch_add(1, std::memory_order_relaxed);
      return absl::OkStatus();
    }
    y = ctx.AllocateOutput(0, DataType::kFloat, stored);
    if (s->numel()) std::memcpy(y.data<float>(), s->data<float>(), s->bytes());
    return absl::OkStatus();
  }

  // The shape for small_map_conv.h when this call is one that path takes: a float32 3x3
  // convolution, padding 1, stride 1 or 2, of one group with constant weights, channels-last
  // in and out and no fused pool, on a map and with weights small_map::Suits.
  std::optional<small_map::Shape> SmallMapShape(const Tensor& x, const Tensor& w, const Tensor* b,
                                                const WindowGeometry& geo, bool x_blocked, int threads) const {
    if (block_ != kChannelsLast || !x_blocked || !out_blocked_ || pool_ || group_ != 1 || !w_constant_ || scale_)
      return std::nullopt;
    if (x.dtype() != DataType::kFloat || w.dtype() != DataType::kFloat || (b && b->dtype() != DataType::kFloat) ||
        x.rank() != 4 || w.dim(2) != 3 || w.dim(3) != 3)
      return std::nullopt;
    for (size_t i = 0; i < 2; ++i)
      if (geo.pads_begin[i] != 1 || geo.pads_end[i] != 1 || geo.dilations[i] != 1 || geo.strides[i] != geo.strides[0])
        return std::nullopt;
    const small_map::Shape s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), w.dim(0), geo.strides[0]};
    if (s.oh() != geo.out[0] || s.ow() != geo.out[1] || !small_map::Suits(s, threads)) return std::nullopt;
    return s;
  }

  // Whether this call is a product of a few one-pixel maps with constant float32 weights: a
  // 1x1 convolution of one group on 1x1 maps without leading pads (MobileNetV3's and V4's head
  // after the pool), no pool, sum or channel scale, shaped for the skinny path (skinny_gemm.h).
  bool IsPointProduct(const Tensor& x, const Tensor& w, const Tensor* b, const WindowGeometry& geo) const {
    if (group_ != 1 || !w_constant_ || pool_ || sum_ || scale_ || x.dtype() != DataType::kFloat ||
        w.dtype() != DataType::kFloat || (b && b->dtype() != DataType::kFloat))
      return false;
    for (int d = 2; d < x.rank(); ++d)  // a leading pad would put the one output on the padding
      if (x.dim(d) != 1 || w.dim(d) != 1 || geo.out[d - 2] != 1 || geo.pads_begin[d - 2] != 0) return false;
    return skinny::IsSkinny(x.dim(0), w.dim(1), w.dim(0));
  }

  // m when this is a float32 convolution of one input channel per group and m > 1 outputs
  // each (repeat_channels.h), else 1.
  int64_t ChannelMultiplier(const Tensor& x, const Tensor& w, const float* scale) const {
    if (group_ == 1 || scale || x.dtype() != DataType::kFloat || x.dim(1) != group_ || w.dim(1) != 1 ||
        w.dim(0) % group_ != 0)
      return 1;
    return w.dim(0) / group_;
  }

  // The post-ops: the activation, then with a residual sum the sum and its activation.
  dnnl::primitive_attr PostOps() const {
    dnnl::post_ops po;
    if (!own_swish_) act_.AppendTo(po);
    if (sum_) {
      po.append_sum(1.f);
      sum_act_.AppendTo(po);
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    return attr;
  }

  // x: the logical [N, C, ...] view (channel-blocked storage when x_blocked); y_dims: the
  // convolution's logical output shape (y itself is pooled with pool_, blocked with block_).
  // With `means`, Y's channel means too.
  absl::Status RunDnnl(const Tensor& x_in, const Tensor& w, const Tensor* b, Tensor& y,
                       const WindowGeometry& geo, const Dims& y_dims, bool x_blocked, const float* scale,
                       const Means* means) {
    // With a channel multiplier m, a depthwise convolution of X's channels repeated m times.
    const int64_t m = ChannelMultiplier(x_in, w, scale);
    const Tensor& x = m > 1 ? repeated_.Of(x_in, m, x_blocked ? block_ : 0) : x_in;
    const int64_t groups = m > 1 ? w.dim(0) : group_;
    try {
      // shapes_ holds the shapes of this call (halves come as float copies of them).
      const Dims key_flags = {b ? 1 : 0, x_blocked ? 1 : 0};
      DnnlConv& e = shapes_.dnnl ? *shapes_.dnnl : cache_.Get({x.dims(), w.dims(), key_flags}, [&] {
        DnnlConv c;
        c.pool = pool_;
        c.sum = sum_;
        c.out_block = pool_ ? block_ : 0;
        c.images = pool_ ? PoolImages(x.dim(0), DimProduct(y_dims, 1, y_dims.size()) * 4) : x.dim(0);
        Dims xd = x.dims(), yd = y_dims;
        xd[0] = yd[0] = c.images;
        c.x_md = x_blocked ? BlockedDesc(xd, block_, dt::f32) : PlainDesc(xd, dt::f32);
        c.y_md = out_blocked_ ? BlockedDesc(yd, block_, dt::f32) : PlainDesc(yd, dt::f32);
        if (groups == 1) {
          c.w_md = PlainDesc(w.dims(), dt::f32);
        } else {
          Dims gw = {groups, w.dim(0) / groups};
          gw.insert(gw.end(), w.dims().begin() + 1, w.dims().end());
          c.w_md = PlainDesc(gw, dt::f32);
        }
        if (b) c.b_md = PlainDesc(b->dims(), dt::f32);
        // Blocked tensors are asked for as they are stored (they are oneDNN's own choice on
        // this CPU); should no kernel take them, or only a reference one, any layout and
        // reorders (DnnlConv::Init).
        // A plain image of few channels (a network's first layer): oneDNN's jit kernels
        // read it as it is into channel blocks, faster than its brgemm kernels after a
        // reorder to channels-last. Into 8 or 16 blocks as stored; before a fused pool of
        // the channels-last layout into the blocks oneDNN picks, the pool converting.
        const bool image = !x_blocked && x.dim(1) <= kImageChannels;
        const bool pool_converts = image && pool_ && block_ == kChannelsLast;
        const bool image_as_stored = pool_converts || (image && !pool_ && (block_ == 8 || block_ == 16));
        auto make_pd = [&](bool as_stored) {
          dnnl::convolution_forward::desc d(
              dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
              as_stored && (x_blocked || image_as_stored) ? c.x_md : AnyLayout(c.x_md), AnyLayout(c.w_md),
              b ? c.b_md : dnnl::memory::desc(),
              as_stored && out_blocked_ && !pool_converts ? c.y_md : AnyLayout(c.y_md),
              dnnl::memory::dims(geo.strides.begin(), geo.strides.end()), Sub1(geo.dilations),
              dnnl::memory::dims(geo.pads_begin.begin(), geo.pads_begin.end()),
              dnnl::memory::dims(geo.pads_end.begin(), geo.pads_end.end()));
          return dnnl::convolution_forward::primitive_desc(d, PostOps(), DnnlEngine());
        };
        dnnl::convolution_forward::primitive_desc pd;
        try {
          pd = make_pd(true);
          if (block_ && std::strncmp(pd.impl_info_str(), "ref", 3) == 0) pd = make_pd(false);
        } catch (const dnnl::error&) {
          if (!block_) throw;
          pd = make_pd(false);
        }
        c.prim = dnnl::convolution_forward(pd);
        c.Init(pd, pd.src_desc(), pd.weights_desc(), pd.dst_desc());
        return c;
      });
      shapes_.dnnl = &e;
      e.Run(x, w, b, y, w_constant_, scale);
    } catch (const dnnl::error& err) {
      return absl::InternalError(std::string("oneDNN convolution failed: ") + err.what());
    }
    float* out = y.data<float>();
    if (own_swish_ && means) {
      swish::SwishInPlaceWithMeans(out, means->outer, means->S, means->B, act_.alpha(), means->data, means->threads);
    } else {
      if (own_swish_) swish::SwishInPlace(out, y.numel(), act_.alpha());
      if (means) ChannelMeansBlocked(out, means->data, means->outer, means->S, means->B, means->threads);
    }
    return absl::OkStatus();
  }

  const Node node_;  // copy: attributes are read per shape
  int64_t group_;
  bool scale_;  // input 4: X's channels scaled, as W * Scale on each call (DnnlConv::PointScaledWeights)
  bool w_constant_;
  FusedActivation act_;
  bool pool_;
  int block_;  // channel_block: 0 = plain NC..., B or kChannelsLast (channel_block.h)
  bool out_blocked_;  // y blocked too (else plain: blocked_output = 0, a blocked x only)
  bool sum_;           // input 3: a residual sum s, y = act(conv) + s, then sum_act_
  bool sum_in_place_;  // the pass allows writing y into s's buffer
  FusedActivation sum_act_;
  // Swish after oneDNN's convolution as swish.h's pass rather than its post-op (~2x faster),
  // unless a fused pool or residual sum comes after it or TANDEM_CPU_OWN_SWISH=0.
  bool own_swish_;
  bool means_;  // output 1: Y's channel means
  ShapeCache<DnnlConv> cache_;  // map nodes: shapes_.dnnl stays valid
  CheckedShapes shapes_;
  small_map::LazyPackedWeights small_map_weights_;  // constant W, packed for small_map_conv.h
  RepeatedChannels repeated_;  // X's channels repeated for a channel multiplier
  skinny::LazyPackedWeights point_weights_;  // constant W, packed for IsPointProduct's calls
};

class ConvTranspose : public Kernel {
 public:
  explicit ConvTranspose(const KernelInfo& info)
      : node_(info.node),
        group_(info.node.attr_int("group", 1)),
        w_constant_(info.constant_input(1) != nullptr) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* b = ctx.input(2);
    auto kernel = CheckConvInputs(node_, x, w, b, group_, true);
    if (!kernel.ok()) return kernel.status();
    const Dims in(x.dims().begin() + 2, x.dims().end());
    auto geo = ComputeTransposedWindowGeometry(node_, in, *kernel);
    if (!geo.ok()) return geo.status();
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(1) * group_;
    Dims out_dims = {N, M};
    out_dims.insert(out_dims.end(), geo->out.begin(), geo->out.end());
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out_dims);
    if (y.numel() == 0) return absl::OkStatus();
    if (in.size() > 3)
      return absl::UnimplementedError("ConvTranspose supports 1 to 3 spatial dimensions");
    // oneDNN takes non-negative pads and output sizes consistent with the input size.
    bool use_dnnl = x.dtype() != DataType::kDouble && x.numel() > 0 && w.numel() > 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t eff = (geo->kernel[i] - 1) * geo->dilations[i] + 1;
      if (geo->pads_begin[i] < 0 || geo->pads_end[i] < 0 ||
          (geo->out[i] - eff + geo->pads_begin[i] + geo->pads_end[i]) / geo->strides[i] + 1 !=
              in[i])
        use_dnnl = false;
    }
    if (use_dnnl) {
      auto st = AsFloat(x, w, b, y, [&](const Tensor& xx, const Tensor& ww, const Tensor* bb,
                                        Tensor& yy) { return RunDnnl(xx, ww, bb, yy, *geo); });
      if (st.ok() || st.code() != absl::StatusCode::kUnimplemented) return st;
    }
    auto ref = [&](const Tensor& xx, const Tensor& ww, const Tensor* bb, Tensor& yy) {
      const Geo3 g = MakeGeo3(in, geo->out, *geo);
      if (xx.dtype() == DataType::kDouble)
        ConvTransposeRef(xx.data<double>(), ww.data<double>(), bb ? bb->data<double>() : nullptr,
                         yy.data<double>(), N, C, M, group_, g);
      else
        ConvTransposeRef(xx.data<float>(), ww.data<float>(), bb ? bb->data<float>() : nullptr,
                         yy.data<float>(), N, C, M, group_, g);
      return absl::OkStatus();
    };
    return AsFloat(x, w, b, y, ref);
  }

 private:
  absl::Status RunDnnl(const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                       const WindowGeometry& geo) {
    try {
      DnnlConv& e = cache_.Get({x.dims(), w.dims(), b ? Dims{1} : Dims{0}}, [&] {
        DnnlConv c;
        c.x_md = PlainDesc(x.dims(), dt::f32);
        c.y_md = PlainDesc(y.dims(), dt::f32);
        // ONNX W is [C, M/g, k...] = [g][C/g][M/g][k...]; oneDNN wants dims
        // [g,] M/g, C/g, k... — describe the ONNX layout with strides.
        const int64_t C = x.dim(1), Mg = w.dim(1), Cg = C / group_;
        const int64_t ksz = DimProduct(w.dims(), 2, w.rank());
        dnnl::memory::dims wd, ws;
        if (group_ > 1) {
          wd = {group_, Mg, Cg};
          ws = {Cg * Mg * ksz, ksz, Mg * ksz};
        } else {
          wd = {Mg, Cg};
          ws = {ksz, Mg * ksz};
        }
        auto kstr = Strides(Dims(w.dims().begin() + 2, w.dims().end()));
        for (int i = 2; i < w.rank(); ++i) {
          wd.push_back(w.dim(i));
          ws.push_back(kstr[i - 2]);
        }
        c.w_md = dnnl::memory::desc(wd, dt::f32, ws);
        if (b) c.b_md = PlainDesc(b->dims(), dt::f32);
        dnnl::deconvolution_forward::desc d(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
            AnyLayout(c.x_md), AnyLayout(c.w_md), b ? c.b_md : dnnl::memory::desc(), AnyLayout(c.y_md),
            dnnl::memory::dims(geo.strides.begin(), geo.strides.end()), Sub1(geo.dilations),
            dnnl::memory::dims(geo.pads_begin.begin(), geo.pads_begin.end()),
            dnnl::memory::dims(geo.pads_end.begin(), geo.pads_end.end()));
        dnnl::deconvolution_forward::primitive_desc pd(d, DnnlEngine());
        c.prim = dnnl::deconvolution_forward(pd);
        c.Init(pd, pd.src_desc(), pd.weights_desc(), pd.dst_desc());
        return c;
      });
      e.Run(x, w, b, y, w_constant_, nullptr);
    } catch (const dnnl::error& err) {
      // Let the caller fall back to the reference loops.
      return absl::UnimplementedError(std::string("oneDNN deconvolution: ") + err.what());
    }
    return absl::OkStatus();
  }

  const Node node_;  // copy: attributes are read per shape
  int64_t group_;
  bool w_constant_;
  ShapeCache<DnnlConv> cache_;
};

// ConvInteger: int32 convolution of (X - x_zero_point) and (W - w_zero_point), the latter
// per tensor or per output channel. One group: products (RunAsProducts); more: reference loops.
class ConvInteger : public Kernel {
 public:
  explicit ConvInteger(const KernelInfo& info)
      : node_(info.node), group_(info.node.attr_int("group", 1)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& w = *ctx.input(1);
    const Tensor* xzp = ctx.input(2);
    const Tensor* wzp = ctx.input(3);
    // X and W may differ in type (uint8 and int8): their shapes are checked without copies.
    auto kernel = CheckConvShapes(node_, x.dims(), w.dims(), nullptr, true, group_, false);
    if (!kernel.ok()) return kernel.status();
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0);
    if (xzp && xzp->numel() != 1)
      return absl::InvalidArgumentError("x_zero_point must be a scalar, got " +
                                        DimsToString(xzp->dims()));
    if (wzp && wzp->numel() != 1 && wzp->numel() != M)
      return absl::InvalidArgumentError("w_zero_point must be a scalar or have " +
                                        std::to_string(M) + " values, got " +
                                        DimsToString(wzp->dims()));
    const Dims in(x.dims().begin() + 2, x.dims().end());
    auto geo = ComputeWindowGeometry(node_, in, *kernel, false);
    if (!geo.ok()) return geo.status();
    if (in.size() > 3)
      return absl::UnimplementedError("ConvInteger supports 1 to 3 spatial dimensions");
    Dims out_dims = {N, M};
    out_dims.insert(out_dims.end(), geo->out.begin(), geo->out.end());
    Tensor& y = ctx.AllocateOutput(0, DataType::kInt32, out_dims);
    if (y.numel() == 0) return absl::OkStatus();
    const int32_t xz = xzp ? static_cast<int32_t>(xzp->ElementAsInt64(0)) : 0;
    if (group_ == 1 && C > 0) return RunAsProducts(x, w, wzp, xz, MakeGeo3(in, geo->out, *geo), y);
    Tensor xi = x.CastTo(DataType::kInt32), wi = w.CastTo(DataType::kInt32);
    int32_t* px = xi.data<int32_t>();
    for (int64_t i = 0; i < xi.numel(); ++i) px[i] -= xz;
    int32_t* pw = wi.data<int32_t>();
    const int64_t per = M > 0 ? wi.numel() / M : 0;
    for (int64_t m = 0; m < M; ++m) {
      const int32_t wz =
          wzp ? static_cast<int32_t>(wzp->ElementAsInt64(wzp->numel() == 1 ? 0 : m)) : 0;
      for (int64_t i = 0; i < per; ++i) pw[m * per + i] -= wz;
    }
    ConvRef(px, pw, static_cast<const int32_t*>(nullptr), y.data<int32_t>(), N, C, M, group_,
            MakeGeo3(in, geo->out, *geo));
    return absl::OkStatus();
  }

 private:
  // One group: per image, Y [M, P] = (W - w_zp) (col - x_zp), the columns padded with x_zp
  // (quantization/conv_columns.h), the exact int32 product from Int8MatMul (oneDNN's int8
  // matmul with VNNI or AMX, float32 blocks otherwise).
  absl::Status RunAsProducts(const Tensor& x, const Tensor& w, const Tensor* wzp, int32_t xz, const Geo3& g,
                             Tensor& y) {
    const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0), K = C * g.k_size(), P = g.out_size();
    std::vector<int32_t> w_zp(1, 0);
    if (wzp) {
      w_zp.resize(static_cast<size_t>(wzp->numel()));
      for (int64_t i = 0; i < wzp->numel(); ++i) w_zp[i] = static_cast<int32_t>(wzp->ElementAsInt64(i));
    }
    Tensor col = Tensor::Host(x.dtype(), {K, P});
    for (int64_t n = 0; n < N; ++n) {
      if (x.dtype() == DataType::kUint8)
        ConvColumns(x.data<uint8_t>() + n * C * g.in_size(), C, g, static_cast<uint8_t>(xz), col.data<uint8_t>());
      else
        ConvColumns(x.data<int8_t>() + n * C * g.in_size(), C, g, static_cast<int8_t>(xz), col.data<int8_t>());
      if (absl::Status st = product_.SetB(col, {xz}, false); !st.ok()) return st;
      if (absl::Status st = product_.Run(w.raw(), w.dtype(), M, w_zp, y.data<int32_t>() + n * M * P); !st.ok())
        return st;
    }
    return absl::OkStatus();
  }

  const Node node_;
  int64_t group_;
  Int8MatMul product_;
};

}  // namespace

int64_t ResidualSumsInPlace() { return sums_in_place.load(std::memory_order_relaxed); }

void RegisterConvKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble, DataType::kFloat16,
                                   DataType::kBfloat16};
  // Conv-1 and Conv-11 differ only in documentation of defaults; same for ConvTranspose.
  r.Add("Conv", 1, 10, t, Make<Conv>());
  r.Add("Conv", 11, kMaxOpset, t, Make<Conv>());
  r.Add(TandemKernel("FusedConv", {DataType::kFloat}, Make<Conv>()));
  r.Add("ConvTranspose", 1, 10, t, Make<ConvTranspose>());
  r.Add("ConvTranspose", 11, kMaxOpset, t, Make<ConvTranspose>());
  r.Add("ConvInteger", 10, kMaxOpset, {DataType::kInt8, DataType::kUint8}, Make<ConvInteger>());
}

}  // namespace tandem::cpu
