// Backward kernels of BatchNormalization and LayerNormalization (ai.tandem domain,
// emitted by training/rules/nn.cc):
//   BatchNormalizationGrad(dY, X, scale[, mean, var]) -> dX, dScale, dB
//     attributes epsilon, training_mode. training_mode=1: batch statistics of X
//     (recomputed here); 0: the given running mean/var are constants.
//   LayerNormalizationGrad(dY, X, scale) -> dX, dScale, dB
//     attributes axis, epsilon; dScale/dB have the normalized shape X.dims[axis:] (the
//     rule sums them down to the shapes of Scale/B when those broadcast).
// float32 runs on oneDNN batch_normalization_backward / layer_normalization_backward
// (statistics computed here: in double for batch norm, in float for layer norm's short
// rows); double uses reference loops.
#include <cmath>
#include <cstring>

#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;
using nf = dnnl::normalization_flags;

// Mean and biased variance of each channel c of x viewed as [N, C, S].
template <typename T>
void ChannelStats(const T* x, int64_t N, int64_t C, int64_t S, std::vector<double>& mean,
                  std::vector<double>& var) {
  mean.assign(C, 0);
  var.assign(C, 0);
  const double cnt = static_cast<double>(N * S);
#pragma omp parallel for if (C > 1 && N * C * S > (1 << 14))
  for (int64_t c = 0; c < C; ++c) {
    double s = 0, q = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* p = x + (n * C + c) * S;
      for (int64_t i = 0; i < S; ++i) s += p[i];
    }
    const double m = s / cnt;
    for (int64_t n = 0; n < N; ++n) {
      const T* p = x + (n * C + c) * S;
      for (int64_t i = 0; i < S; ++i) q += (p[i] - m) * (p[i] - m);
    }
    mean[c] = m;
    var[c] = q / cnt;
  }
}

// Reference BatchNormalization backward (see the file comment for the two modes).
template <typename T>
void BatchNormGradRef(const T* dy, const T* x, const T* scale, const std::vector<double>& mean,
                      const std::vector<double>& var, double eps, bool training, int64_t N,
                      int64_t C, int64_t S, T* dx, T* dscale, T* dbias) {
  const double cnt = static_cast<double>(N * S);
#pragma omp parallel for if (C > 1 && N * C * S > (1 << 14))
  for (int64_t c = 0; c < C; ++c) {
    const double inv = 1.0 / std::sqrt(var[c] + eps), m = mean[c];
    double sdy = 0, sdyx = 0;
    for (int64_t n = 0; n < N; ++n) {
      const T* g = dy + (n * C + c) * S;
      const T* p = x + (n * C + c) * S;
      for (int64_t i = 0; i < S; ++i) {
        sdy += g[i];
        sdyx += g[i] * (p[i] - m) * inv;
      }
    }
    if (dscale) dscale[c] = static_cast<T>(sdyx);
    if (dbias) dbias[c] = static_cast<T>(sdy);
    if (!dx) continue;
    const double a = scale[c] * inv;
    for (int64_t n = 0; n < N; ++n) {
      const T* g = dy + (n * C + c) * S;
      const T* p = x + (n * C + c) * S;
      T* o = dx + (n * C + c) * S;
      for (int64_t i = 0; i < S; ++i)
        o[i] = static_cast<T>(training ? a * (g[i] - sdy / cnt - (p[i] - m) * inv * sdyx / cnt)
                                       : a * g[i]);
    }
  }
}

class BatchNormGrad : public Kernel {
 public:
  explicit BatchNormGrad(const KernelInfo& info)
      : epsilon_(info.node.attr_float("epsilon", 1e-5f)),
        training_(info.node.attr_int("training_mode", 1) != 0) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* dy = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* scale = ctx.input(2);
    if (!dy || !x || !scale) return absl::InvalidArgumentError("dY, X and scale are required");
    if (x->rank() < 2) return absl::InvalidArgumentError("X must have rank >= 2, got " + DimsToString(x->dims()));
    if (dy->dims() != x->dims())
      return absl::InvalidArgumentError("dY " + DimsToString(dy->dims()) + " and X " +
                                        DimsToString(x->dims()) + " differ in shape");
    const int64_t N = x->dim(0), C = x->dim(1), S = DimProduct(x->dims(), 2, x->rank());
    std::vector<const Tensor*> params = {scale};
    if (!training_) {
      if (!ctx.input(3) || !ctx.input(4))
        return absl::InvalidArgumentError("training_mode=0 needs the running mean and var inputs");
      params.push_back(ctx.input(3));
      params.push_back(ctx.input(4));
    }
    for (const Tensor* p : params) {
      if (p->dtype() != x->dtype() || p->numel() != C)
        return absl::InvalidArgumentError("scale/mean/var must hold " + std::to_string(C) + " values of X's type, got " +
                                          DimsToString(p->dims()));
    }
    if (dy->dtype() != x->dtype()) return absl::InvalidArgumentError("dY and X differ in element type");
    Tensor* dx = ctx.output_wanted(0) ? &ctx.AllocateOutput(0, x->dtype(), x->dims()) : nullptr;
    Tensor* dscale = ctx.output_wanted(1) ? &ctx.AllocateOutput(1, x->dtype(), {C}) : nullptr;
    Tensor* dbias = ctx.output_wanted(2) ? &ctx.AllocateOutput(2, x->dtype(), {C}) : nullptr;
    if (x->numel() == 0) {
      for (Tensor* t : {dscale, dbias})
        if (t && t->numel() > 0) std::memset(t->raw(), 0, t->numel() * SizeOf(t->dtype()));
      return absl::OkStatus();
    }
    std::vector<double> mean, var;
    auto stats = [&](auto tag) {
      using T = decltype(tag);
      if (training_) {
        ChannelStats(x->data<T>(), N, C, S, mean, var);
      } else {
        mean.assign(params[1]->data<T>(), params[1]->data<T>() + C);
        var.assign(params[2]->data<T>(), params[2]->data<T>() + C);
      }
    };
    if (x->dtype() == DataType::kDouble) {
      stats(double{});
      BatchNormGradRef(dy->data<double>(), x->data<double>(), scale->data<double>(), mean, var,
                       epsilon_, training_, N, C, S, dx ? dx->data<double>() : nullptr,
                       dscale ? dscale->data<double>() : nullptr, dbias ? dbias->data<double>() : nullptr);
      return absl::OkStatus();
    }
    stats(float{});
    if (x->rank() <= 5) {
      auto st = RunDnnl(*dy, *x, *scale, mean, var, dx, dscale, dbias);
      if (st.code() != absl::StatusCode::kUnimplemented) return st;
    }
    BatchNormGradRef(dy->data<float>(), x->data<float>(), scale->data<float>(), mean, var, epsilon_,
                     training_, N, C, S, dx ? dx->data<float>() : nullptr,
                     dscale ? dscale->data<float>() : nullptr, dbias ? dbias->data<float>() : nullptr);
    return absl::OkStatus();
  }

 private:
  struct Entry {
    dnnl::batch_normalization_backward prim;
    dnnl::memory::desc x_md, c_md;
    dnnl::memory mean, var, shift, dx_scratch, dscale_scratch, dbias_scratch;  // shift: unused, but oneDNN 2.6 wants it
  };

  absl::Status RunDnnl(const Tensor& dy, const Tensor& x, const Tensor& scale,
                       const std::vector<double>& mean, const std::vector<double>& var, Tensor* dx,
                       Tensor* dscale, Tensor* dbias) {
    const int64_t C = x.dim(1);
    try {
      Entry& e = cache_.Get({x.dims()}, [&] {
        Entry n;
        auto& eng = DnnlEngine();
        n.x_md = PlainDesc(x.dims(), dt::f32);
        n.c_md = PlainDesc({C}, dt::f32);
        nf flags = nf::use_scale | nf::use_shift;
        if (!training_) flags = flags | nf::use_global_stats;
        dnnl::batch_normalization_forward::desc fd(dnnl::prop_kind::forward_training, n.x_md,
                                                   epsilon_, flags);
        dnnl::batch_normalization_forward::primitive_desc fpd(fd, eng);
        dnnl::batch_normalization_backward::desc bd(dnnl::prop_kind::backward, n.x_md, n.x_md,
                                                    epsilon_, flags);
        n.prim = dnnl::batch_normalization_backward(
            dnnl::batch_normalization_backward::primitive_desc(bd, eng, fpd));
        n.mean = dnnl::memory(n.c_md, eng);
        n.var = dnnl::memory(n.c_md, eng);
        n.shift = dnnl::memory(n.c_md, eng);
        std::memset(n.shift.get_data_handle(), 0, n.c_md.get_size());
        n.dscale_scratch = dnnl::memory(n.c_md, eng);
        n.dbias_scratch = dnnl::memory(n.c_md, eng);
        return n;
      });
      float* m = static_cast<float*>(e.mean.get_data_handle());
      float* v = static_cast<float*>(e.var.get_data_handle());
      for (int64_t c = 0; c < C; ++c) {
        m[c] = static_cast<float>(mean[c]);
        v[c] = static_cast<float>(var[c]);
      }
      if (!dx && !e.dx_scratch) e.dx_scratch = dnnl::memory(e.x_md, DnnlEngine());  // rare
      e.prim.execute(DnnlStream(),
                     {{DNNL_ARG_SRC, WrapTensor(x, e.x_md)},
                      {DNNL_ARG_DIFF_DST, WrapTensor(dy, e.x_md)},
                      {DNNL_ARG_MEAN, e.mean},
                      {DNNL_ARG_VARIANCE, e.var},
                      {DNNL_ARG_SHIFT, e.shift},
                      {DNNL_ARG_SCALE, WrapTensor(scale, e.c_md)},
                      {DNNL_ARG_DIFF_SRC, dx ? WrapTensor(*dx, e.x_md) : e.dx_scratch},
                      {DNNL_ARG_DIFF_SCALE, dscale ? WrapTensor(*dscale, e.c_md) : e.dscale_scratch},
                      {DNNL_ARG_DIFF_SHIFT, dbias ? WrapTensor(*dbias, e.c_md) : e.dbias_scratch}});
      DnnlStream().wait();
    } catch (const dnnl::error& err) {
      return absl::UnimplementedError(err.what());
    }
    return absl::OkStatus();
  }

  float epsilon_;
  bool training_;
  ShapeCache<Entry> cache_;
};

// Reference LayerNormalization backward over rows [outer, inner]; sc is Scale expanded to
// `inner` values. dscale/dbias (may be null) have `inner` values.
template <typename T>
void LayerNormGradRef(const T* dy, const T* x, const std::vector<double>& sc, double eps,
                      int64_t outer, int64_t inner, T* dx, T* dscale, T* dbias) {
  std::vector<double> ds(inner, 0), db(inner, 0), xhat(inner);
  for (int64_t o = 0; o < outer; ++o) {
    const T* p = x + o * inner;
    const T* g = dy + o * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i) mean += p[i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i) var += (p[i] - mean) * (p[i] - mean);
    const double inv = 1.0 / std::sqrt(var / inner + eps);
    double mg = 0, mgx = 0;  // means of g*scale and g*scale*xhat
    for (int64_t i = 0; i < inner; ++i) {
      xhat[i] = (p[i] - mean) * inv;
      ds[i] += g[i] * xhat[i];
      db[i] += g[i];
      mg += g[i] * sc[i];
      mgx += g[i] * sc[i] * xhat[i];
    }
    mg /= inner;
    mgx /= inner;
    if (dx)
      for (int64_t i = 0; i < inner; ++i)
        dx[o * inner + i] = static_cast<T>(inv * (g[i] * sc[i] - mg - xhat[i] * mgx));
  }
  for (int64_t i = 0; i < inner; ++i) {
    if (dscale) dscale[i] = static_cast<T>(ds[i]);
    if (dbias) dbias[i] = static_cast<T>(db[i]);
  }
}

class LayerNormGrad : public Kernel {
 public:
  explicit LayerNormGrad(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", -1)), epsilon_(info.node.attr_float("epsilon", 1e-5f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* dy = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* scale = ctx.input(2);
    if (!dy || !x || !scale) return absl::InvalidArgumentError("dY, X and Scale are required");
    if (dy->dims() != x->dims() || dy->dtype() != x->dtype() || scale->dtype() != x->dtype())
      return absl::InvalidArgumentError("dY " + DimsToString(dy->dims()) + ", X " + DimsToString(x->dims()) +
                                        " and Scale must agree in shape and element type");
    auto axis = NormalizeAxis(axis_, x->rank());
    if (!axis.ok()) return axis.status();
    const Dims inner_dims(x->dims().begin() + *axis, x->dims().end());
    const int64_t outer = DimProduct(x->dims(), 0, *axis), inner = NumElements(inner_dims);
    auto b = BroadcastShapes(scale->dims(), inner_dims);
    if (!b.ok() || *b != inner_dims)
      return absl::InvalidArgumentError("Scale of shape " + DimsToString(scale->dims()) +
                                        " cannot be broadcast to " + DimsToString(inner_dims));
    Tensor* dx = ctx.output_wanted(0) ? &ctx.AllocateOutput(0, x->dtype(), x->dims()) : nullptr;
    Tensor* dscale = ctx.output_wanted(1) ? &ctx.AllocateOutput(1, x->dtype(), inner_dims) : nullptr;
    Tensor* dbias = ctx.output_wanted(2) ? &ctx.AllocateOutput(2, x->dtype(), inner_dims) : nullptr;
    if (inner == 0) return absl::OkStatus();
    if (outer == 0) {
      for (Tensor* t : {dscale, dbias})
        if (t) std::memset(t->raw(), 0, t->numel() * SizeOf(t->dtype()));
      return absl::OkStatus();
    }
    // Scale expanded to `inner` values.
    std::vector<double> sc(inner);
    const auto strides = BroadcastStrides(scale->dims(), inner_dims);
    ForEachBroadcast(inner_dims, {strides}, [&](int64_t i, const std::vector<int64_t>& off) {
      sc[i] = x->dtype() == DataType::kDouble ? scale->data<double>()[off[0]] : scale->data<float>()[off[0]];
    });
    if (x->dtype() == DataType::kDouble) {
      LayerNormGradRef(dy->data<double>(), x->data<double>(), sc, epsilon_, outer, inner,
                       dx ? dx->data<double>() : nullptr, dscale ? dscale->data<double>() : nullptr,
                       dbias ? dbias->data<double>() : nullptr);
      return absl::OkStatus();
    }
    auto st = RunDnnl(*dy, *x, sc, outer, inner, dx, dscale, dbias);
    if (st.code() != absl::StatusCode::kUnimplemented) return st;
    LayerNormGradRef(dy->data<float>(), x->data<float>(), sc, epsilon_, outer, inner,
                     dx ? dx->data<float>() : nullptr, dscale ? dscale->data<float>() : nullptr,
                     dbias ? dbias->data<float>() : nullptr);
    return absl::OkStatus();
  }

 private:
  struct Entry {
    dnnl::layer_normalization_backward prim;
    dnnl::memory::desc x_md, stat_md, c_md;
    dnnl::memory mean, var, scale, shift, dx_scratch, dscale_scratch, dbias_scratch;  // shift: as above
  };

  absl::Status RunDnnl(const Tensor& dy, const Tensor& x, const std::vector<double>& sc,
                       int64_t outer, int64_t inner, Tensor* dx, Tensor* dscale, Tensor* dbias) {
    try {
      Entry& e = cache_.Get({x.dims()}, [&] {
        Entry n;
        auto& eng = DnnlEngine();
        n.x_md = PlainDesc({outer, inner}, dt::f32);
        n.stat_md = PlainDesc({outer}, dt::f32);
        n.c_md = PlainDesc({inner}, dt::f32);
        const nf flags = nf::use_scale | nf::use_shift;
        dnnl::layer_normalization_forward::desc fd(dnnl::prop_kind::forward_training, n.x_md,
                                                   n.stat_md, epsilon_, flags);
        dnnl::layer_normalization_forward::primitive_desc fpd(fd, eng);
        dnnl::layer_normalization_backward::desc bd(dnnl::prop_kind::backward, n.x_md, n.x_md,
                                                    n.stat_md, epsilon_, flags);
        n.prim = dnnl::layer_normalization_backward(
            dnnl::layer_normalization_backward::primitive_desc(bd, eng, fpd));
        n.mean = dnnl::memory(n.stat_md, eng);
        n.var = dnnl::memory(n.stat_md, eng);
        n.scale = dnnl::memory(n.c_md, eng);
        n.shift = dnnl::memory(n.c_md, eng);
        std::memset(n.shift.get_data_handle(), 0, n.c_md.get_size());
        n.dscale_scratch = dnnl::memory(n.c_md, eng);
        n.dbias_scratch = dnnl::memory(n.c_md, eng);
        return n;
      });
      const float* px = x.data<float>();
      float* m = static_cast<float*>(e.mean.get_data_handle());
      float* v = static_cast<float*>(e.var.get_data_handle());
#pragma omp parallel for if (outer > 1 && outer * inner > (1 << 14))
      for (int64_t o = 0; o < outer; ++o) {
        // In float, a vector of partial sums (as the forward's statistics are taken); the
        // variance from the deviations, two passes.
        const float* p = px + o * inner;
        float s = 0, q = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t i = 0; i < inner; ++i) s += p[i];
        const float mu = s / static_cast<float>(inner);
#pragma omp simd reduction(+ : q)
        for (int64_t i = 0; i < inner; ++i) q += (p[i] - mu) * (p[i] - mu);
        m[o] = mu;
        v[o] = q / static_cast<float>(inner);
      }
      float* s = static_cast<float*>(e.scale.get_data_handle());
      for (int64_t i = 0; i < inner; ++i) s[i] = static_cast<float>(sc[i]);
      if (!dx && !e.dx_scratch) e.dx_scratch = dnnl::memory(e.x_md, DnnlEngine());  // rare
      e.prim.execute(DnnlStream(),
                     {{DNNL_ARG_SRC, WrapTensor(x, e.x_md)},
                      {DNNL_ARG_DIFF_DST, WrapTensor(dy, e.x_md)},
                      {DNNL_ARG_MEAN, e.mean},
                      {DNNL_ARG_VARIANCE, e.var},
                      {DNNL_ARG_SHIFT, e.shift},
                      {DNNL_ARG_SCALE, e.scale},
                      {DNNL_ARG_DIFF_SRC, dx ? WrapTensor(*dx, e.x_md) : e.dx_scratch},
                      {DNNL_ARG_DIFF_SCALE, dscale ? WrapTensor(*dscale, e.c_md) : e.dscale_scratch},
                      {DNNL_ARG_DIFF_SHIFT, dbias ? WrapTensor(*dbias, e.c_md) : e.dbias_scratch}});
      DnnlStream().wait();
    } catch (const dnnl::error& err) {
      return absl::UnimplementedError(err.what());
    }
    return absl::OkStatus();
  }

  int64_t axis_;
  float epsilon_;
  ShapeCache<Entry> cache_;
};

}  // namespace

void RegisterNormGradKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble};
  r.Add(TandemKernel("BatchNormalizationGrad", t, Make<BatchNormGrad>()));
  r.Add(TandemKernel("LayerNormalizationGrad", t, Make<LayerNormGrad>()));
}

}  // namespace tandem::cpu
