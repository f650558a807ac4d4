// Backward kernels of MaxPool and AveragePool (ai.tandem domain, emitted by
// training/rules/nn.cc), with the forward node's attributes:
//   MaxPoolGrad(dY, X) -> dX      dY routed to the argmax of each window (first maximum)
//   AveragePoolGrad(dY, X) -> dX  dY spread over each window (count_include_pad, ceil_mode)
//   GlobalAveragePoolGrad(dY, X) -> dX   dX[n, c, ...] = dY[n, c] / spatial size
// MaxPoolGrad may carry relu_mask = 1 (set by the ReluGrad fusion in optimizer/activation_fusion.cc
// when X is a Relu output): dX is then also 0 where X <= 0, i.e. ReluGrad(dX, X) fused in.
// The 2x2 stride-2 unpadded max pool has a direct plain-NCHW kernel (float and double).
// Otherwise float32 runs on oneDNN pooling_v2 (max: a forward_training pass for the workspace, then
// backward) in the channel-blocked layout; double, and the ceil_mode + count_include_pad
// corner oneDNN divides differently, use reference loops that mirror pool.cc's forward.
#include <cstring>
#include <limits>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/grad_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;
using grad::DnnlPort;

// Reference backward over planes [N*C, in...]. Window positions count as "padded" while
// inside input + explicit pads (the ceil_mode tail beyond them is not counted), as in the
// forward kernel.
template <typename T>
void PoolGradRef(const T* x, const T* dy, T* dx, int64_t planes, const Geo3& g, bool is_max,
                 bool count_include_pad) {
  const int64_t isz = g.in[0] * g.in[1] * g.in[2], osz = g.out[0] * g.out[1] * g.out[2];
  std::memset(dx, 0, sizeof(T) * planes * isz);
#pragma omp parallel for if (planes > 1)
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T* xp = x + pl * isz;
    T* gp = dx + pl * isz;
    std::vector<int64_t> taps;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const int64_t st[3] = {o0 * g.s[0] - g.pb[0], o1 * g.s[1] - g.pb[1], o2 * g.s[2] - g.pb[2]};
          taps.clear();
          int64_t padded = 0;
          for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
            const int64_t i0 = st[0] + k0 * g.d[0];
            if (i0 >= g.in[0] + g.pe[0]) break;
            for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
              const int64_t i1 = st[1] + k1 * g.d[1];
              if (i1 >= g.in[1] + g.pe[1]) break;
              for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                const int64_t i2 = st[2] + k2 * g.d[2];
                if (i2 >= g.in[2] + g.pe[2]) break;
                ++padded;
                if (i0 < 0 || i1 < 0 || i2 < 0 || i0 >= g.in[0] || i1 >= g.in[1] || i2 >= g.in[2])
                  continue;
                taps.push_back((i0 * g.in[1] + i1) * g.in[2] + i2);
              }
            }
          }
          if (taps.empty()) continue;
          const T grad = dy[pl * osz + (o0 * g.out[1] + o1) * g.out[2] + o2];
          if (is_max) {
            int64_t best = taps[0];
            for (int64_t t : taps)
              if (xp[t] > xp[best]) best = t;
            gp[best] += grad;
          } else {
            const T share = grad / static_cast<T>(count_include_pad ? padded : taps.size());
            for (int64_t t : taps) gp[t] += share;
          }
        }
  }
}

// The common 2x2, stride-2, unpadded max pool (floor mode) straight on plain NCHW: the
// argmax of each window is recomputed from X (first maximum, as PoolGradRef) and dY is
// written there; every other element of dX, a trailing odd row/column included, is 0.
template <typename T, bool kReluMask>
void MaxPoolGrad2x2(const T* __restrict x, const T* __restrict dy, T* __restrict dx, int64_t planes,
                    int64_t H, int64_t W) {
  const int64_t OH = H / 2, OW = W / 2;
#pragma omp parallel for schedule(static) if (planes * H * W >= (1 << 15))
  for (int64_t p = 0; p < planes; ++p) {
    const T* xp = x + p * H * W;
    T* gp = dx + p * H * W;
    const T* dp = dy + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const T* r0 = xp + 2 * oh * W;
      const T* r1 = r0 + W;
      T* g0 = gp + 2 * oh * W;
      T* g1 = g0 + W;
      const T* d = dp + oh * OW;
      for (int64_t j = 0; j < OW; ++j) {
        const T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], e = r1[2 * j + 1];
        // First maximum in a, b, c, e order (strict >), branch-free.
        const bool pb = b > a;
        const T ab = pb ? b : a;
        const bool pc = c > ab;
        const T abc = pc ? c : ab;
        const bool pe = e > abc;
        // Route dY to the winner (selects only, so the loop vectorizes); relu_mask then
        // zeroes each position whose X <= 0, exactly as a following ReluGrad would.
        T v = d[j];
        T o3 = pe ? v : T(0);
        v = pe ? T(0) : v;
        T o2 = pc ? v : T(0);
        v = pc ? T(0) : v;
        T o1 = pb ? v : T(0);
        T o0 = pb ? T(0) : v;
        if constexpr (kReluMask) {
          o0 = a > T(0) ? o0 : T(0);
          o1 = b > T(0) ? o1 : T(0);
          o2 = c > T(0) ? o2 : T(0);
          o3 = e > T(0) ? o3 : T(0);
        }
        g0[2 * j] = o0;
        g0[2 * j + 1] = o1;
        g1[2 * j] = o2;
        g1[2 * j + 1] = o3;
      }
      if (W & 1) g0[W - 1] = g1[W - 1] = T(0);
    }
    if (H & 1) std::memset(gp + (H - 1) * W, 0, sizeof(T) * W);
  }
}

bool Is2x2Stride2(const Tensor& x, const WindowGeometry& g) {
  if (x.rank() != 4 || g.out.size() != 2) return false;
  for (int i = 0; i < 2; ++i)
    if (g.kernel[i] != 2 || g.strides[i] != 2 || g.dilations[i] != 1 || g.pads_begin[i] != 0 ||
        g.pads_end[i] != 0 || g.out[i] != x.dim(2 + i) / 2)
      return false;
  return true;
}

class PoolGrad : public Kernel {
 public:
  PoolGrad(const KernelInfo& info, bool is_max)
      : node_(info.node),
        kernel_(info.node.attr_ints("kernel_shape")),
        is_max_(is_max),
        relu_mask_(is_max && info.node.attr_int("relu_mask", 0) != 0),
        count_include_pad_(info.node.attr_int("count_include_pad", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* dy = ctx.input(0);
    const Tensor* x = ctx.input(1);
    if (!dy || !x) return absl::InvalidArgumentError("dY and X are required");
    if (x->rank() < 3 || x->rank() > 5)
      return absl::InvalidArgumentError("X must have rank 3 to 5, got " + DimsToString(x->dims()));
    if (dy->dtype() != x->dtype()) return absl::InvalidArgumentError("dY and X differ in element type");
    if (kernel_.empty()) return absl::InvalidArgumentError("attribute kernel_shape is required");
    const Dims in(x->dims().begin() + 2, x->dims().end());
    auto geo = ComputeWindowGeometry(node_, in, kernel_, true);
    if (!geo.ok()) return geo.status();
    Dims ydims = {x->dim(0), x->dim(1)};
    ydims.insert(ydims.end(), geo->out.begin(), geo->out.end());
    if (dy->dims() != ydims)
      return absl::InvalidArgumentError("dY has shape " + DimsToString(dy->dims()) +
                                        ", the forward output has " + DimsToString(ydims));
    Tensor& dx = ctx.AllocateOutput(0, x->dtype(), x->dims());
    if (x->numel() == 0) return absl::OkStatus();
    const int64_t planes = x->dim(0) * x->dim(1);
    if (dy->numel() == 0) {
      std::memset(dx.raw(), 0, dx.numel() * SizeOf(dx.dtype()));
      return absl::OkStatus();
    }
    const bool dbl = x->dtype() == DataType::kDouble;
    if (is_max_ && Is2x2Stride2(*x, *geo)) {
      const int64_t H = x->dim(2), W = x->dim(3);
      if (dbl && relu_mask_) MaxPoolGrad2x2<double, true>(x->data<double>(), dy->data<double>(), dx.data<double>(), planes, H, W);
      else if (dbl) MaxPoolGrad2x2<double, false>(x->data<double>(), dy->data<double>(), dx.data<double>(), planes, H, W);
      else if (relu_mask_) MaxPoolGrad2x2<float, true>(x->data<float>(), dy->data<float>(), dx.data<float>(), planes, H, W);
      else MaxPoolGrad2x2<float, false>(x->data<float>(), dy->data<float>(), dx.data<float>(), planes, H, W);
      return absl::OkStatus();
    }
    bool done = false;
    if (!dbl) {
      auto st = RunDnnl(*x, *dy, dx, *geo);
      if (st.code() != absl::StatusCode::kUnimplemented && !st.ok()) return st;
      done = st.ok();
    }
    if (!done) {
      const Geo3 g = MakeGeo3(in, geo->out, *geo);
      if (dbl)
        PoolGradRef(x->data<double>(), dy->data<double>(), dx.data<double>(), planes, g, is_max_,
                    count_include_pad_);
      else
        PoolGradRef(x->data<float>(), dy->data<float>(), dx.data<float>(), planes, g, is_max_,
                    count_include_pad_);
    }
    if (relu_mask_) {
      if (dbl) ReluMask(x->data<double>(), dx.data<double>(), x->numel());
      else ReluMask(x->data<float>(), dx.data<float>(), x->numel());
    }
    return absl::OkStatus();
  }

  template <typename T>
  static void ReluMask(const T* x, T* dx, int64_t n) {
#pragma omp parallel for if (n >= (1 << 15))
    for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > T(0) ? dx[i] : T(0);
  }

 private:
  struct Entry {
    std::optional<dnnl::pooling_v2_forward> fwd;  // max only: produces the workspace
    dnnl::pooling_v2_backward bwd;
    DnnlPort x, dy, dx;
    dnnl::memory y_scratch, ws;
  };

  absl::Status RunDnnl(const Tensor& x, const Tensor& dy, Tensor& dx, const WindowGeometry& geo) {
    const size_t n = geo.out.size();
    dnnl::memory::dims pe(n);
    bool extended = false;
    for (size_t i = 0; i < n; ++i) {
      const int64_t eff = (geo.kernel[i] - 1) * geo.dilations[i] + 1;
      const int64_t need = (geo.out[i] - 1) * geo.strides[i] + eff - x.dim(2 + i) - geo.pads_begin[i];
      pe[i] = std::max(geo.pads_end[i], need);
      extended |= need > geo.pads_end[i];
    }
    if (extended && !is_max_ && count_include_pad_) return absl::UnimplementedError("");
    try {
      Entry& e = cache_.Get({x.dims()}, [&] {
        Entry c;
        auto& eng = DnnlEngine();
        const auto x_md = PlainDesc(x.dims(), dt::f32), y_md = PlainDesc(dy.dims(), dt::f32);
        dnnl::memory::desc px = x_md;
        if (x.dim(1) > 1) px = BlockedDesc(x.dims(), ChannelBlock(), dt::f32);
        const auto alg = is_max_ ? dnnl::algorithm::pooling_max
                         : count_include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                                              : dnnl::algorithm::pooling_avg_exclude_padding;
        const auto strides = grad::ToDims(geo.strides), kernel = grad::ToDims(geo.kernel),
                   dil = grad::DnnlDilations(geo.dilations), pb = grad::ToDims(geo.pads_begin);
        dnnl::pooling_v2_forward::desc fd(dnnl::prop_kind::forward_training, alg, px,
                                          AnyLayout(y_md), strides, kernel, dil, pb, pe);
        dnnl::pooling_v2_forward::primitive_desc fpd(fd, eng);
        dnnl::pooling_v2_backward::desc bd(alg, px, fpd.dst_desc(), strides, kernel, dil, pb, pe);
        dnnl::pooling_v2_backward::primitive_desc bpd(bd, eng, fpd);
        c.bwd = dnnl::pooling_v2_backward(bpd);
        if (is_max_) {
          c.fwd = dnnl::pooling_v2_forward(fpd);
          c.x.InitIn(x_md, fpd.src_desc());
          c.y_scratch = dnnl::memory(fpd.dst_desc(), eng);
          c.ws = dnnl::memory(fpd.workspace_desc(), eng);
        }
        c.dy.InitIn(y_md, bpd.diff_dst_desc());
        c.dx.InitOut(x_md, bpd.diff_src_desc());
        return c;
      });
      auto& s = DnnlStream();
      if (e.fwd)
        e.fwd->execute(s, {{DNNL_ARG_SRC, e.x.In(x)}, {DNNL_ARG_DST, e.y_scratch},
                           {DNNL_ARG_WORKSPACE, e.ws}});
      std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_DIFF_DST, e.dy.In(dy)},
                                                    {DNNL_ARG_DIFF_SRC, e.dx.Out(dx)}};
      if (e.fwd) args[DNNL_ARG_WORKSPACE] = e.ws;
      e.bwd.execute(s, args);
      e.dx.Finish(dx);
      s.wait();
    } catch (const dnnl::error& err) {
      return absl::UnimplementedError(err.what());
    }
    return absl::OkStatus();
  }

  const Node node_;  // copy: attributes are read per shape
  std::vector<int64_t> kernel_;
  bool is_max_, relu_mask_, count_include_pad_;
  ShapeCache<Entry> cache_;
};

template <bool kMax>
KernelFactory MakePoolGrad() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new PoolGrad(info, kMax));
  };
}

class GlobalAveragePoolGrad : public Kernel {
 public:
  explicit GlobalAveragePoolGrad(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* dy = ctx.input(0);
    const Tensor* x = ctx.input(1);
    if (!dy || !x) return absl::InvalidArgumentError("dY and X are required");
    if (x->rank() < 2 || dy->dtype() != x->dtype() || dy->rank() != x->rank() ||
        dy->dim(0) != x->dim(0) || dy->dim(1) != x->dim(1) || dy->numel() != x->dim(0) * x->dim(1))
      return absl::InvalidArgumentError("dY of shape " + DimsToString(dy->dims()) +
                                        " is not the global pool of X of shape " + DimsToString(x->dims()));
    Tensor& dx = ctx.AllocateOutput(0, x->dtype(), x->dims());
    const int64_t planes = dy->numel(), size = DimProduct(x->dims(), 2, x->rank());
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* g = dy->data<T>();
      T* o = dx.data<T>();
#pragma omp parallel for if (planes * size > (1 << 16))
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t i = 0; i < size; ++i) o[p * size + i] = g[p] / static_cast<T>(size);
    };
    if (x->dtype() == DataType::kDouble) run(double{});
    else run(float{});
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterPoolGradKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble};
  r.Add(TandemKernel("MaxPoolGrad", t, MakePoolGrad<true>()));
  r.Add(TandemKernel("AveragePoolGrad", t, MakePoolGrad<false>()));
  r.Add(TandemKernel("GlobalAveragePoolGrad", t, Make<GlobalAveragePoolGrad>()));
}

}  // namespace tandem::cpu
