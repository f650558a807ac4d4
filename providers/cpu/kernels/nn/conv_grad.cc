// Backward kernels of Conv and ConvTranspose (ai.tandem domain, emitted by
// training/rules/nn.cc):
//   ConvGrad(dY, X, W) -> dX, dW, dB            attributes of the forward Conv
//   ConvTransposeGrad(dY, X, W) -> dX, dW, dB   attributes of the forward ConvTranspose
// Both are written in "conv terms": a convolution B = conv(A, W) with W of shape
// [Cb, Ca/group, k...]. For Conv, A = X and B = Y; for ConvTranspose, A = Y and B = X
// (the ONNX ConvTranspose weight layout [C, M/group, k...] is exactly that). Then
//   Conv:          dX = backward_data(dY, W),  dW = backward_weights(X, dY)
//   ConvTranspose: dX = forward(dY, W),        dW = backward_weights(dY, X)
// ConvGrad may carry relu_mask = 1 (set by the ReluGrad fusion in optimizer/activation_fusion.cc when
// X is a Relu output): dX is then 0 where X <= 0, i.e. ReluGrad(dX, X) fused in — on the
// oneDNN path inside the unblocking of dX from the channel-blocked layout.
// float32 runs on oneDNN convolution primitives (format_tag::any layouts plus reorders,
// cached per shape; a float32 Conv's dB comes from backward_weights); double, and cases
// oneDNN rejects (negative pads), use reference loops.
#include <algorithm>
#include <cstring>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/grad_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;
using grad::DnnlPort;

// Calls f(out_offset, kernel_offset, in_offset) for every tap of the window that lands
// inside A (padding taps are skipped).
template <typename F>
void ForEachTap(const Geo3& g, F&& f) {
  for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
    for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
      const int64_t i0 = o0 * g.s[0] + k0 * g.d[0] - g.pb[0];
      if (i0 < 0 || i0 >= g.in[0]) continue;
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
          const int64_t i1 = o1 * g.s[1] + k1 * g.d[1] - g.pb[1];
          if (i1 < 0 || i1 >= g.in[1]) continue;
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2)
            for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
              const int64_t i2 = o2 * g.s[2] + k2 * g.d[2] - g.pb[2];
              if (i2 < 0 || i2 >= g.in[2]) continue;
              f((o0 * g.out[1] + o1) * g.out[2] + o2, (k0 * g.k[1] + k1) * g.k[2] + k2,
                (i0 * g.in[1] + i1) * g.in[2] + i2);
            }
        }
    }
}

// Channel counts of the conv-terms problem.
struct Chans {
  int64_t N, Ca, Cb, G;
};

// B = conv(A, W)
template <typename T>
void RefForward(const T* a, const T* w, T* b, const Chans& c, const Geo3& g) {
  const int64_t Cag = c.Ca / c.G, Cbg = c.Cb / c.G;
  const int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  std::memset(b, 0, sizeof(T) * c.N * c.Cb * osz);
#pragma omp parallel for collapse(2) if (c.N * c.Cb > 1)
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t cb = 0; cb < c.Cb; ++cb) {
      T* bp = b + (n * c.Cb + cb) * osz;
      for (int64_t ca = 0; ca < Cag; ++ca) {
        const T* ap = a + (n * c.Ca + (cb / Cbg) * Cag + ca) * isz;
        const T* wp = w + (cb * Cag + ca) * ksz;
        ForEachTap(g, [&](int64_t o, int64_t k, int64_t i) { bp[o] += ap[i] * wp[k]; });
      }
    }
}

// dA from dB and W.
template <typename T>
void RefBackwardData(const T* db, const T* w, T* da, const Chans& c, const Geo3& g) {
  const int64_t Cag = c.Ca / c.G, Cbg = c.Cb / c.G;
  const int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  std::memset(da, 0, sizeof(T) * c.N * c.Ca * isz);
#pragma omp parallel for collapse(2) if (c.N * c.Ca > 1)
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t cag = 0; cag < c.Ca; ++cag) {  // each thread owns one dA plane
      const int64_t grp = cag / Cag, ca = cag % Cag;
      T* ap = da + (n * c.Ca + cag) * isz;
      for (int64_t cbo = 0; cbo < Cbg; ++cbo) {
        const int64_t cb = grp * Cbg + cbo;
        const T* bp = db + (n * c.Cb + cb) * osz;
        const T* wp = w + (cb * Cag + ca) * ksz;
        ForEachTap(g, [&](int64_t o, int64_t k, int64_t i) { ap[i] += bp[o] * wp[k]; });
      }
    }
}

// dW from A and dB.
template <typename T>
void RefBackwardWeights(const T* a, const T* db, T* dw, const Chans& c, const Geo3& g) {
  const int64_t Cag = c.Ca / c.G, Cbg = c.Cb / c.G;
  const int64_t isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  std::memset(dw, 0, sizeof(T) * c.Cb * Cag * ksz);
#pragma omp parallel for collapse(2) if (c.Cb * Cag > 1)
  for (int64_t cb = 0; cb < c.Cb; ++cb)
    for (int64_t ca = 0; ca < Cag; ++ca) {
      T* wp = dw + (cb * Cag + ca) * ksz;
      for (int64_t n = 0; n < c.N; ++n) {
        const T* ap = a + (n * c.Ca + (cb / Cbg) * Cag + ca) * isz;
        const T* bp = db + (n * c.Cb + cb) * osz;
        ForEachTap(g, [&](int64_t o, int64_t k, int64_t i) { wp[k] += bp[o] * ap[i]; });
      }
    }
}

// dB[m] = sum of dY over batch and space, in double with 8 independent partial sums (a
// fixed order: vectorizable and deterministic), channels shared among the threads.
template <typename T>
void BiasGrad(const T* dy, T* dbias, int64_t N, int64_t M, int64_t S) {
#pragma omp parallel for schedule(static) if (N * M * S >= (1 << 15))
  for (int64_t m = 0; m < M; ++m) {
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t n = 0; n < N; ++n) {
      const T* p = dy + (n * M + m) * S;
      int64_t i = 0;
      for (; i + 8 <= S; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += static_cast<double>(p[i + k]);
      for (; i < S; ++i) acc[i & 7] += static_cast<double>(p[i]);
    }
    dbias[m] = static_cast<T>(((acc[0] + acc[1]) + (acc[2] + acc[3])) +
                              ((acc[4] + acc[5]) + (acc[6] + acc[7])));
  }
}

// dX *= (X > 0) on plain tensors.
template <typename T>
void ReluMask(const T* x, T* dx, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= (1 << 15))
  for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > T(0) ? dx[i] : T(0);
}

// dx[N, C, S] = (x > 0 ? src : 0), src channel-blocked [N, ceil(C/B), S, B]: the reorder of
// oneDNN's blocked diff_src to plain with the relu mask applied on the way.
template <int B>
void UnblockReluMask(const float* src, const float* x, float* dx, int64_t N, int64_t C, int64_t S) {
  const int64_t CB = (C + B - 1) / B;
#pragma omp parallel for collapse(2) schedule(static) if (N * C * S >= (1 << 15))
  for (int64_t n = 0; n < N; ++n)
    for (int64_t cb = 0; cb < CB; ++cb) {
      const float* blk = src + (n * CB + cb) * S * B;
      const int64_t cn = std::min<int64_t>(B, C - cb * B);
      for (int64_t k = 0; k < cn; ++k) {
        const int64_t off = (n * C + cb * B + k) * S;
        const float* xp = x + off;
        float* o = dx + off;
        for (int64_t i = 0; i < S; ++i) o[i] = xp[i] > 0.f ? blk[i * B + k] : 0.f;
      }
    }
}

// The oneDNN primitives of one conv-terms problem, built for the outputs wanted.
struct DnnlEntry {
  std::optional<dnnl::convolution_forward> fwd;              // B from A, W
  std::optional<dnnl::convolution_backward_data> data;       // dA from dB, W
  std::optional<dnnl::convolution_backward_weights> wts;     // dW from A, dB
  DnnlPort f_a, f_w, f_b, d_db, d_w, d_da, w_a, w_db, w_dw, w_bias;
  bool share_a = false, share_db = false;  // backward_weights reuses the other's reorder
};

class ConvGradKernel : public Kernel {
 public:
  ConvGradKernel(const KernelInfo& info, bool transpose)
      : node_(info.node),
        group_(info.node.attr_int("group", 1)),
        transpose_(transpose),
        relu_mask_(info.node.attr_int("relu_mask", 0) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* dy = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* w = ctx.input(2);
    if (!dy || !x || !w) return absl::InvalidArgumentError("dY, X and W are required");
    if (x->rank() < 3 || x->rank() > 5)
      return absl::InvalidArgumentError("X must have rank 3 to 5, got " + DimsToString(x->dims()));
    if (w->rank() != x->rank())
      return absl::InvalidArgumentError("W has shape " + DimsToString(w->dims()) +
                                        ", expected rank " + std::to_string(x->rank()));
    if (dy->dtype() != x->dtype() || w->dtype() != x->dtype())
      return absl::InvalidArgumentError("dY, X and W must have the same element type");
    if (group_ <= 0) return absl::InvalidArgumentError("group must be positive");
    const int64_t N = x->dim(0), C = x->dim(1);
    if (C % group_ != 0 || (!transpose_ && (w->dim(1) * group_ != C || w->dim(0) % group_ != 0)) ||
        (transpose_ && w->dim(0) != C))
      return absl::InvalidArgumentError("W of shape " + DimsToString(w->dims()) + " does not fit X of shape " +
                                        DimsToString(x->dims()) + " with group " + std::to_string(group_));
    const int64_t M = transpose_ ? w->dim(1) * group_ : w->dim(0);
    const std::vector<int64_t> kernel(w->dims().begin() + 2, w->dims().end());
    if (node_.attr_ints("kernel_shape", kernel) != kernel)
      return absl::InvalidArgumentError("kernel_shape does not match W of shape " + DimsToString(w->dims()));
    const Dims xsp(x->dims().begin() + 2, x->dims().end());
    auto geo = transpose_ ? ComputeTransposedWindowGeometry(node_, xsp, kernel)
                          : ComputeWindowGeometry(node_, xsp, kernel, false);
    if (!geo.ok()) return geo.status();
    Dims ydims = {N, M};
    ydims.insert(ydims.end(), geo->out.begin(), geo->out.end());
    if (dy->dims() != ydims)
      return absl::InvalidArgumentError("dY has shape " + DimsToString(dy->dims()) +
                                        ", the forward output has " + DimsToString(ydims));
    Tensor* dx = ctx.output_wanted(0) ? &ctx.AllocateOutput(0, x->dtype(), x->dims()) : nullptr;
    Tensor* dw = ctx.output_wanted(1) ? &ctx.AllocateOutput(1, x->dtype(), w->dims()) : nullptr;
    Tensor* db = ctx.output_wanted(2) ? &ctx.AllocateOutput(2, x->dtype(), {M}) : nullptr;
    const int64_t S = DimProduct(ydims, 2, static_cast<int>(ydims.size()));
    const bool empty = x->numel() == 0 || w->numel() == 0 || dy->numel() == 0;
    // float32 Conv with dW: oneDNN's backward_weights also reduces dB in the same pass.
    Tensor* db_dnnl = db && dw && !empty && !transpose_ && x->dtype() == DataType::kFloat ? db : nullptr;
    auto bias_grad = [&] {
      if (x->dtype() == DataType::kDouble) BiasGrad(dy->data<double>(), db->data<double>(), N, M, S);
      else BiasGrad(dy->data<float>(), db->data<float>(), N, M, S);
    };
    if (db && !db_dnnl) bias_grad();
    if (!dx && !dw) return absl::OkStatus();
    if (empty) {  // nothing flows: zero gradients
      for (Tensor* t : {dx, dw})
        if (t && t->numel() > 0) std::memset(t->raw(), 0, t->numel() * SizeOf(t->dtype()));
      return absl::OkStatus();
    }
    // Conv terms: A, dB and dA (see the file comment).
    const Tensor& a = transpose_ ? *dy : *x;
    const Tensor& bsrc = transpose_ ? *x : *dy;  // dB for Conv, B-shaped X for ConvTranspose
    const Dims asp(a.dims().begin() + 2, a.dims().end()), bsp(bsrc.dims().begin() + 2, bsrc.dims().end());
    const Chans ch{N, a.dim(1), bsrc.dim(1), group_};
    if (x->dtype() == DataType::kFloat) {
      auto st = RunDnnl(a, bsrc, *w, transpose_ ? nullptr : dx, transpose_ ? dx : nullptr, dw, db_dnnl,
                        *geo, *x);
      if (st.code() != absl::StatusCode::kUnimplemented) return st;
    }
    if (db_dnnl) bias_grad();
    const Geo3 g = MakeGeo3(asp, bsp, *geo);
    auto run = [&](auto tag) {
      using T = decltype(tag);
      if (dx && transpose_) RefForward(a.data<T>(), w->data<T>(), dx->data<T>(), ch, g);
      if (dx && !transpose_) RefBackwardData(bsrc.data<T>(), w->data<T>(), dx->data<T>(), ch, g);
      if (dw) RefBackwardWeights(a.data<T>(), bsrc.data<T>(), dw->data<T>(), ch, g);
    };
    if (x->dtype() == DataType::kDouble) run(double{});
    else run(float{});
    if (dx && relu_mask_) {
      if (x->dtype() == DataType::kDouble) ReluMask(x->data<double>(), dx->data<double>(), x->numel());
      else ReluMask(x->data<float>(), dx->data<float>(), x->numel());
    }
    return absl::OkStatus();
  }

 private:
  // oneDNN path; Unimplemented when oneDNN cannot express the case (caller falls back).
  absl::Status RunDnnl(const Tensor& a, const Tensor& bsrc, const Tensor& w, Tensor* da,
                       Tensor* b_out, Tensor* dw, Tensor* dbias, const WindowGeometry& geo,
                       const Tensor& x) {
    const size_t n = geo.kernel.size();
    dnnl::memory::dims pl(n), pr(n);
    for (size_t i = 0; i < n; ++i) {
      const int64_t eff = (geo.kernel[i] - 1) * geo.dilations[i] + 1;
      pl[i] = geo.pads_begin[i];
      // A right pad consistent with B's size under oneDNN's floor division (rows of A
      // that no window reaches, e.g. from output_padding, need no padding).
      pr[i] = (bsrc.dim(2 + i) - 1) * geo.strides[i] + eff - a.dim(2 + i) - pl[i];
      if (pr[i] < 0 && pr[i] + geo.strides[i] - 1 >= 0) pr[i] = 0;
      if (pl[i] < 0 || pr[i] < 0) return absl::UnimplementedError("negative padding");
    }
    try {
      const Dims key_flags = {da ? 1 : 0, b_out ? 1 : 0, dw ? 1 : 0, dbias ? 1 : 0};
      DnnlEntry& e = cache_.Get({a.dims(), bsrc.dims(), w.dims(), key_flags}, [&] {
        DnnlEntry c;
        auto& eng = DnnlEngine();
        const dnnl::memory::desc a_md = PlainDesc(a.dims(), dt::f32), b_md = PlainDesc(bsrc.dims(), dt::f32);
        dnnl::memory::desc w_md = PlainDesc(w.dims(), dt::f32);
        if (group_ > 1) {
          Dims gw = {group_, w.dim(0) / group_};
          gw.insert(gw.end(), w.dims().begin() + 1, w.dims().end());
          w_md = PlainDesc(gw, dt::f32);
        }
        const auto strides = grad::ToDims(geo.strides), dil = grad::DnnlDilations(geo.dilations);
        const auto any_a = AnyLayout(a_md), any_b = AnyLayout(b_md), any_w = AnyLayout(w_md);
        dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training,
                                           dnnl::algorithm::convolution_direct, any_a, any_w,
                                           any_b, strides, dil, pl, pr);
        dnnl::convolution_forward::primitive_desc fpd(fd, eng);
        if (b_out) {
          c.fwd = dnnl::convolution_forward(fpd);
          c.f_a.InitIn(a_md, fpd.src_desc());
          c.f_w.InitIn(w_md, fpd.weights_desc());
          c.f_b.InitOut(b_md, fpd.dst_desc());
        }
        if (da) {
          dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, any_a, any_w,
                                                  any_b, strides, dil, pl, pr);
          dnnl::convolution_backward_data::primitive_desc pd(d, eng, fpd);
          c.data = dnnl::convolution_backward_data(pd);
          c.d_db.InitIn(b_md, pd.diff_dst_desc());
          c.d_w.InitIn(w_md, pd.weights_desc());
          c.d_da.InitOut(a_md, pd.diff_src_desc());
        }
        if (dw) {
          const auto bias_md = PlainDesc({bsrc.dim(1)}, dt::f32);
          auto d = dbias ? dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, any_a,
                                                                    any_w, bias_md, any_b, strides, dil, pl, pr)
                         : dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, any_a,
                                                                    any_w, any_b, strides, dil, pl, pr);
          dnnl::convolution_backward_weights::primitive_desc pd(d, eng, fpd);
          if (dbias) c.w_bias.InitOut(bias_md, pd.diff_bias_desc());
          c.wts = dnnl::convolution_backward_weights(pd);
          c.w_a.InitIn(a_md, pd.src_desc());
          c.w_db.InitIn(b_md, pd.diff_dst_desc());
          c.w_dw.InitOut(w_md, pd.diff_weights_desc());
          c.share_a = c.fwd && c.f_a.prim == c.w_a.prim;
          c.share_db = c.data && c.d_db.prim == c.w_db.prim;
          if (c.share_a) c.w_a = DnnlPort{};  // drop the unused buffers
          if (c.share_db) c.w_db = DnnlPort{};
        }
        return c;
      });
      auto& s = DnnlStream();
      dnnl::memory a_mem, db_mem;
      if (b_out) {
        a_mem = e.f_a.In(a);
        e.fwd->execute(s, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, e.f_w.In(w)},
                           {DNNL_ARG_DST, e.f_b.Out(*b_out)}});
        FinishDx(e.f_b, *b_out, x);
      }
      if (da) {
        db_mem = e.d_db.In(bsrc);
        e.data->execute(s, {{DNNL_ARG_DIFF_DST, db_mem}, {DNNL_ARG_WEIGHTS, e.d_w.In(w)},
                            {DNNL_ARG_DIFF_SRC, e.d_da.Out(*da)}});
        FinishDx(e.d_da, *da, x);
      }
      if (dw) {
        std::unordered_map<int, dnnl::memory> args = {
            {DNNL_ARG_SRC, e.share_a ? a_mem : e.w_a.In(a)},
            {DNNL_ARG_DIFF_DST, e.share_db ? db_mem : e.w_db.In(bsrc)},
            {DNNL_ARG_DIFF_WEIGHTS, e.w_dw.Out(*dw)}};
        if (dbias) args[DNNL_ARG_DIFF_BIAS] = e.w_bias.Out(*dbias);
        e.wts->execute(s, args);
        e.w_dw.Finish(*dw);
        if (dbias) e.w_bias.Finish(*dbias);
      }
      s.wait();
    } catch (const dnnl::error& err) {
      return absl::UnimplementedError(std::string("oneDNN convolution backward: ") + err.what());
    }
    return absl::OkStatus();
  }

  // Writes dX from the primitive's result, applying relu_mask (X > 0) when set.
  void FinishDx(grad::DnnlPort& port, Tensor& dx, const Tensor& x) {
    if (!relu_mask_) return port.Finish(dx);
    const int64_t N = dx.dim(0), C = dx.dim(1), S = DimProduct(dx.dims(), 2, dx.rank());
    if (port.re && dx.rank() >= 3 && dx.rank() <= 5) {
      using ft = dnnl::memory::format_tag;
      const int r = dx.rank();
      const auto blocked = [&](ft t3, ft t4, ft t5) {
        return port.prim == dnnl::memory::desc(port.plain.dims(), dt::f32, r == 3 ? t3 : r == 4 ? t4 : t5);
      };
      const float* src = static_cast<const float*>(port.buf.get_data_handle());
      if (blocked(ft::aBc8b, ft::aBcd8b, ft::aBcde8b)) {
        DnnlStream().wait();
        return UnblockReluMask<8>(src, x.data<float>(), dx.data<float>(), N, C, S);
      }
      if (blocked(ft::aBc16b, ft::aBcd16b, ft::aBcde16b)) {
        DnnlStream().wait();
        return UnblockReluMask<16>(src, x.data<float>(), dx.data<float>(), N, C, S);
      }
    }
    port.Finish(dx);
    DnnlStream().wait();
    ReluMask(x.data<float>(), dx.data<float>(), dx.numel());
  }

  const Node node_;  // copy: attributes are read per shape
  int64_t group_;
  bool transpose_, relu_mask_;
  ShapeCache<DnnlEntry> cache_;
};

template <bool kTranspose>
KernelFactory MakeConvGrad() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new ConvGradKernel(info, kTranspose));
  };
}

}  // namespace

void RegisterConvGradKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble};
  r.Add(TandemKernel("ConvGrad", t, MakeConvGrad<false>()));
  r.Add(TandemKernel("ConvTransposeGrad", t, MakeConvGrad<true>()));
}

}  // namespace tandem::cpu
