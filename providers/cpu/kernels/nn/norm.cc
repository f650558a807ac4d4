// Normalization ops: BatchNormalization (inference, and training mode with running
// statistics), LRN, InstanceNormalization, LayerNormalization (with Mean/InvStdDev),
// RMSNormalization, GroupNormalization, LpNormalization and MeanVarianceNormalization. float32 LRN (odd size) and LayerNormalization (full-size
// scale/bias) run on the oneDNN lrn / layer_normalization primitives; float32 inference
// BatchNormalization is a fused per-channel scale/shift loop (several times faster than
// oneDNN's plain-layout batch_normalization), also on channel-blocked input (attribute
// channel_block, providers/cpu/rewrites/blocked_layout.h); the rest use reference loops in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/scale_shift.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

using dt = dnnl::memory::data_type;
using nf = dnnl::normalization_flags;

// Element i of a float-like tensor as double, and storing a double into one.
double Get(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kDouble: return t.data<double>()[i];
    case DataType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DataType::kBfloat16: return static_cast<float>(t.data<BFloat16>()[i]);
    default: return t.ElementAsDouble(i);
  }
}
void Set(Tensor& t, int64_t i, double v) {
  switch (t.dtype()) {
    case DataType::kFloat: t.data<float>()[i] = static_cast<float>(v); break;
    case DataType::kDouble: t.data<double>()[i] = v; break;
    case DataType::kFloat16: t.data<Float16>()[i] = Float16(static_cast<float>(v)); break;
    case DataType::kBfloat16: t.data<BFloat16>()[i] = BFloat16(static_cast<float>(v)); break;
    default: break;
  }
}
// The mean of p[0, n) and 1 / sqrt(variance + epsilon), summed in double (two passes: the
// variance from the deviations); the OpenMP simd sums vectorize.
std::pair<double, double> MeanAndInverseStd(const float* p, int64_t n, double epsilon) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += p[i];
  const double mean = sum / static_cast<double>(std::max<int64_t>(n, 1));
  double squares = 0;
#pragma omp simd reduction(+ : squares)
  for (int64_t i = 0; i < n; ++i) squares += (p[i] - mean) * (p[i] - mean);
  return {mean, 1.0 / std::sqrt(squares / static_cast<double>(std::max<int64_t>(n, 1)) + epsilon)};
}

// y[i] = (x[i] - mean) * inverse_std * scale + bias for i < n, as one multiply-add in float.
void Normalize(const float* x, float* y, int64_t n, double mean, double inverse_std, double scale, double bias) {
  const float a = static_cast<float>(inverse_std * scale), b = static_cast<float>(bias - mean * inverse_std * scale);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
}

// A float x [N, groups * cg, S] normalized over each group of cg channels (cg * S values),
// then channel c of group g scaled and shifted by scale / bias[k], k = g (per_group_scale)
// or g * cg + c: GroupNormalization, and InstanceNormalization as its groups of one channel.
// The N * groups groups go to the OpenMP team when there are two or more and 2^15 values.
void NormalizeFloatGroups(const Tensor& x, Tensor& y, const Tensor& scale, const Tensor& bias, int64_t N,
                          int64_t groups, int64_t cg, int64_t S, double epsilon, bool per_group_scale) {
  const int64_t planes = N * groups, len = cg * S;
  ParallelForIf(planes > 1 && x.numel() >= (int64_t{1} << 15), planes, [&](int64_t ng) {
    const float* in = x.data<float>() + ng * len;
    float* out = y.data<float>() + ng * len;
    const int64_t g = ng % groups;
    const auto [mean, inv] = MeanAndInverseStd(in, len, epsilon);
    for (int64_t c = 0; c < cg; ++c) {
      const int64_t k = per_group_scale ? g : g * cg + c;
      Normalize(in + c * S, out + c * S, S, mean, inv, Get(scale, k), Get(bias, k));
    }
  });
}

std::vector<double> ReadAll(const Tensor& t) {
  std::vector<double> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = Get(t, i);
  return v;
}

// Error unless `t` (when given) broadcasts to `dims` without growing them (a Scale/B over
// the normalized dims).
absl::Status CheckBroadcastsTo(const Tensor* t, const Dims& dims) {
  if (!t) return absl::OkStatus();
  auto b = BroadcastShapes(t->dims(), dims);
  if (!b.ok() || *b != dims || t->rank() > static_cast<int>(dims.size()))
    return absl::InvalidArgumentError("scale/bias of shape " + DimsToString(t->dims()) +
                                      " cannot be broadcast to " + DimsToString(dims));
  return absl::OkStatus();
}
// The values of `t` broadcast to `dims` (checked by CheckBroadcastsTo), or `fill` when absent.
std::vector<double> ExpandTo(const Tensor* t, const Dims& dims, double fill) {
  std::vector<double> v(NumElements(dims), fill);
  if (!t) return v;
  ForEachBroadcast(dims, {BroadcastStrides(t->dims(), dims)},
                   [&](int64_t i, const std::vector<int64_t>& off) { v[i] = Get(*t, off[0]); });
  return v;
}

// ---------------------------------------------------------------------------------------
// BatchNormalization

class BatchNorm : public Kernel {
 public:
  explicit BatchNorm(const KernelInfo& info)
      : opset_(info.opset),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)),
        momentum_(info.node.attr_float("momentum", 0.9f)),
        spatial_(info.opset >= 9 || info.node.attr_int("spatial", 1) != 0),
        block_(static_cast<int>(info.node.attr_int("channel_block", 0))),
        relu_(info.node.attr_string("activation", "") == "Relu") {
    training_ = info.opset >= 14 ? info.node.attr_int("training_mode", 0) != 0
                                 : info.node.has_output(1);
  }

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x_in = *ctx.input(0);
    const Tensor* p[4] = {ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)};
    // The logical [N, C, spatial...] view (the same bytes when channel-blocked).
    Tensor x = x_in;
    if (block_ != 0) {
      auto view = LogicalView(x_in, block_, 2);
      if (!view.ok()) return view.status();
      if (training_ || x_in.dtype() != DataType::kFloat)
        return absl::InvalidArgumentError("channel-blocked BatchNormalization is float32 inference");
      x = *std::move(view);
    }
    static const char* names[4] = {"scale", "B", "mean", "var"};
    if (x.rank() < 2)
      return absl::InvalidArgumentError("X must have rank >= 2, got " + DimsToString(x.dims()));
    const int64_t N = x.dim(0), C = x.dim(1), S = DimProduct(x.dims(), 2, x.rank());
    // Parameters are per channel, or per channel and position when spatial == 0.
    const int64_t per = spatial_ ? C : C * S;
    for (int i = 0; i < 4; ++i) {
      if (!p[i]) return absl::InvalidArgumentError(std::string("input ") + names[i] + " is missing");
      if (p[i]->numel() != per)
        return absl::InvalidArgumentError(std::string(names[i]) + " has shape " +
                                          DimsToString(p[i]->dims()) + ", expected " +
                                          std::to_string(per) + " values");
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x_in.dims());
    if (training_) return Train(ctx, x, p, y, N, C, S);
    if (x.numel() == 0) return absl::OkStatus();
    const bool all_f32 = x.dtype() == DataType::kFloat &&
                         std::all_of(p, p + 4, [](const Tensor* t) { return t->dtype() == DataType::kFloat; });
    if (all_f32 && spatial_) return ScaleShiftF32(x, p, y, N, C, S);
    if (block_ != 0)
      return absl::InvalidArgumentError("channel-blocked inference needs float32 per-channel parameters");
    // y = x * a + b with a = scale / sqrt(var + eps), b = B - mean * a.
    std::vector<double> sc = ReadAll(*p[0]), bi = ReadAll(*p[1]), mu = ReadAll(*p[2]),
                        va = ReadAll(*p[3]);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          const int64_t k = spatial_ ? c : c * S + s;
          const double a = sc[k] / std::sqrt(va[k] + epsilon_);
          const int64_t i = (n * C + c) * S + s;
          const double v = (Get(x, i) - mu[k]) * a + bi[k];
          Set(y, i, relu_ && v < 0 ? 0.0 : v);
        }
    return absl::OkStatus();
  }

 private:
  // float32 inference: y = x * a[c] + b[c], one vectorizable pass (faster than oneDNN's
  // plain-layout batch normalization, which measured ~5x slower at [1,32,32,32]).
  absl::Status ScaleShiftF32(const Tensor& x, const Tensor* const* p, Tensor& y, int64_t N,
                             int64_t C, int64_t S) {
    std::vector<float> a, b;
    InferenceScaleShift(p[0]->data<float>(), p[1]->data<float>(), p[2]->data<float>(), p[3]->data<float>(),
                        epsilon_, C, a, b);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    if (block_ != 0) {  // [N, C/B, S, B]: channel (plane % (C/B)) * B + k
      // Work in pieces of whole rows, so one channels-last image (B = C) spreads over threads.
      const int64_t B = y.dims().back(), CB = C / B, planes = N * CB;
      const int64_t rows = std::max<int64_t>(1, 4096 / B), pieces = (S + rows - 1) / rows;
      ParallelForIf(planes * S * B >= (1 << 14), planes * pieces, [&](int64_t task) {
        const int64_t pl = task / pieces, r0 = task % pieces * rows, nr = std::min(rows, S - r0);
        const float* ab = a.data() + (pl % CB) * B;
        const float* bb = b.data() + (pl % CB) * B;
        const float* xi = px + (pl * S + r0) * B;
        float* yi = py + (pl * S + r0) * B;
        ScaleShiftBlockRows(xi, yi, nr, B, ab, bb, relu_);
      });
      return absl::OkStatus();
    }
    const int64_t planes = N * C;
#pragma omp parallel for schedule(static) if (planes * S >= (1 << 14))
    for (int64_t pl = 0; pl < planes; ++pl) {
      const float ac = a[pl % C], bc = b[pl % C];
      const float* xi = px + pl * S;
      float* yi = py + pl * S;
      if (relu_)
        for (int64_t i = 0; i < S; ++i) yi[i] = std::max(xi[i] * ac + bc, 0.f);
      else
        for (int64_t i = 0; i < S; ++i) yi[i] = xi[i] * ac + bc;
    }
    return absl::OkStatus();
  }

  // Training mode: normalize with batch statistics; outputs 1/2 are the updated running
  // mean/var, and (before opset 14) 3/4 the batch mean/var.
  absl::Status Train(KernelContext& ctx, const Tensor& x, const Tensor* const* p, Tensor& y,
                     int64_t N, int64_t C, int64_t S) {
    if (!spatial_) return absl::UnimplementedError("training mode with spatial=0");
    const int64_t cnt = N * S;
    if (cnt == 0) return absl::InvalidArgumentError("training mode needs a non-empty batch");
    std::vector<double> mean(C, 0), var(C, 0);
    for (int64_t c = 0; c < C; ++c) {
      double s = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < S; ++k) s += Get(x, (n * C + c) * S + k);
      mean[c] = s / cnt;
      double v = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < S; ++k) {
          const double d = Get(x, (n * C + c) * S + k) - mean[c];
          v += d * d;
        }
      var[c] = v / cnt;
    }
    for (int64_t c = 0; c < C; ++c) {
      const double a = Get(*p[0], c) / std::sqrt(var[c] + epsilon_), b = Get(*p[1], c);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < S; ++k) {
          const int64_t i = (n * C + c) * S + k;
          Set(y, i, (Get(x, i) - mean[c]) * a + b);
        }
    }
    const DataType st = p[2]->dtype();
    for (int o = 1; o <= 4; ++o) {
      if (!ctx.output_wanted(o) || (o > 2 && opset_ >= 14)) continue;
      Tensor& t = ctx.AllocateOutput(o, st, {C});
      for (int64_t c = 0; c < C; ++c) {
        double v = o == 1   ? Get(*p[2], c) * momentum_ + mean[c] * (1 - momentum_)
                   : o == 2 ? Get(*p[3], c) * momentum_ + var[c] * (1 - momentum_)
                   : o == 3 ? mean[c]
                            : var[c];
        Set(t, c, v);
      }
    }
    return absl::OkStatus();
  }

  int opset_;
  float epsilon_, momentum_;
  bool spatial_;
  int block_;  // channel_block: 0 = plain NC... (set for inference by the blocked-layout pass)
  bool relu_;  // activation = "Relu" (providers/cpu/rewrites/norm_relu.h): y = max(normalized, 0)
  bool training_ = false;
};

// ---------------------------------------------------------------------------------------
// LRN: y = x / (bias + alpha / size * sum of squares over a channel window)^beta

class Lrn : public Kernel {
 public:
  explicit Lrn(const KernelInfo& info)
      : alpha_(info.node.attr_float("alpha", 1e-4f)),
        beta_(info.node.attr_float("beta", 0.75f)),
        bias_(info.node.attr_float("bias", 1.f)),
        size_(info.node.attr_int("size", 0)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (size_ <= 0) return absl::InvalidArgumentError("attribute size must be positive");
    if (x.rank() < 2)
      return absl::InvalidArgumentError("X must have rank >= 2, got " + DimsToString(x.dims()));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.numel() == 0) return absl::OkStatus();
    if (x.dtype() == DataType::kFloat && size_ % 2 == 1 && x.rank() >= 3 && x.rank() <= 5) {
      try {
        Entry& e = cache_.Get({x.dims()}, [&] {
          Entry n;
          n.md = PlainDesc(x.dims(), dt::f32);
          dnnl::lrn_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::lrn_across_channels, n.md, size_, alpha_,
                                    beta_, bias_);
          n.prim = dnnl::lrn_forward(dnnl::lrn_forward::primitive_desc(d, DnnlEngine()));
          return n;
        });
        e.prim.execute(DnnlStream(), {{DNNL_ARG_SRC, WrapTensor(x, e.md)},
                                      {DNNL_ARG_DST, WrapTensor(y, e.md)}});
        DnnlStream().wait();
        return absl::OkStatus();
      } catch (const dnnl::error&) {
        // Shapes oneDNN's LRN does not take fall through to the reference loop.
      }
    }
    const int64_t N = x.dim(0), C = x.dim(1), S = DimProduct(x.dims(), 2, x.rank());
    const int64_t lo = (size_ - 1) / 2, hi = size_ - 1 - lo;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          double sum = 0;
          for (int64_t cc = std::max<int64_t>(0, c - lo); cc <= std::min(C - 1, c + hi); ++cc) {
            const double v = Get(x, (n * C + cc) * S + s);
            sum += v * v;
          }
          const int64_t i = (n * C + c) * S + s;
          Set(y, i, Get(x, i) / std::pow(bias_ + alpha_ / size_ * sum, beta_));
        }
    return absl::OkStatus();
  }

 private:
  struct Entry {
    dnnl::lrn_forward prim;
    dnnl::memory::desc md;
  };
  float alpha_, beta_, bias_;
  int64_t size_;
  ShapeCache<Entry> cache_;
};

// ---------------------------------------------------------------------------------------
// InstanceNormalization: per (n, c) over the spatial dims.

class InstanceNorm : public Kernel {
 public:
  explicit InstanceNorm(const KernelInfo& info) : epsilon_(info.node.attr_float("epsilon", 1e-5f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor& bias = *ctx.input(2);
    if (x.rank() < 3)
      return absl::InvalidArgumentError("input must have rank >= 3, got " + DimsToString(x.dims()));
    const int64_t N = x.dim(0), C = x.dim(1), S = DimProduct(x.dims(), 2, x.rank());
    if (scale.numel() != C || bias.numel() != C)
      return absl::InvalidArgumentError("scale and B must have " + std::to_string(C) +
                                        " values, got " + DimsToString(scale.dims()) + " and " +
                                        DimsToString(bias.dims()));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.numel() == 0) return absl::OkStatus();
    if (x.dtype() == DataType::kFloat) {  // planes in parallel, vectorized sums
      NormalizeFloatGroups(x, y, scale, bias, N, C, 1, S, epsilon_, /*per_group_scale=*/true);
      return absl::OkStatus();
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t base = (n * C + c) * S;
        double mean = 0, var = 0;
        for (int64_t s = 0; s < S; ++s) mean += Get(x, base + s);
        mean /= S;
        for (int64_t s = 0; s < S; ++s) {
          const double d = Get(x, base + s) - mean;
          var += d * d;
        }
        var /= S;
        const double a = Get(scale, c) / std::sqrt(var + epsilon_), b = Get(bias, c);
        for (int64_t s = 0; s < S; ++s) Set(y, base + s, (Get(x, base + s) - mean) * a + b);
      }
    return absl::OkStatus();
  }

 private:
  float epsilon_;
};

// ---------------------------------------------------------------------------------------
// LayerNormalization (opset 17): normalize over dims [axis, rank).

class LayerNorm : public Kernel {
 public:
  explicit LayerNorm(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", -1)),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)),
        stat_type_(info.output_types.size() > 1 ? info.output_types[1] : DataType::kUndefined) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor* bias = ctx.input(2);
    auto axis = NormalizeAxis(axis_, x.rank());
    if (!axis.ok()) return axis.status();
    const Dims inner_dims(x.dims().begin() + *axis, x.dims().end());
    const int64_t outer = DimProduct(x.dims(), 0, *axis), inner = NumElements(inner_dims);
    for (const Tensor* t : {&scale, bias})
      if (auto s = CheckBroadcastsTo(t, inner_dims); !s.ok()) return s;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    Dims stat_dims(x.dims().begin(), x.dims().begin() + *axis);
    stat_dims.resize(x.rank(), 1);
    DataType st = stat_type_;
    if (st != DataType::kFloat && st != DataType::kDouble && st != DataType::kFloat16 &&
        st != DataType::kBfloat16)
      st = x.dtype() == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
    Tensor* mean_t = ctx.output_wanted(1) ? &ctx.AllocateOutput(1, st, stat_dims) : nullptr;
    Tensor* inv_t = ctx.output_wanted(2) ? &ctx.AllocateOutput(2, st, stat_dims) : nullptr;
    if (x.numel() == 0) return absl::OkStatus();
    const bool full = scale.numel() == inner && (!bias || bias->numel() == inner);
    if (x.dtype() == DataType::kFloat && scale.dtype() == DataType::kFloat &&
        (!bias || bias->dtype() == DataType::kFloat) && full) {
      auto s = RunDnnl(x, scale, bias, y, mean_t, inv_t, outer, inner);
      if (s.code() != absl::StatusCode::kUnimplemented) return s;
    }
    const std::vector<double> sc = ExpandTo(&scale, inner_dims, 1), bi = ExpandTo(bias, inner_dims, 0);
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = o * inner;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < inner; ++i) mean += Get(x, base + i);
      mean /= inner;
      for (int64_t i = 0; i < inner; ++i) {
        const double d = Get(x, base + i) - mean;
        var += d * d;
      }
      var /= inner;
      const double inv = 1.0 / std::sqrt(var + epsilon_);
      for (int64_t i = 0; i < inner; ++i)
        Set(y, base + i, (Get(x, base + i) - mean) * inv * sc[i] + bi[i]);
      if (mean_t) Set(*mean_t, o, mean);
      if (inv_t) Set(*inv_t, o, inv);
    }
    return absl::OkStatus();
  }

 private:
  struct Entry {
    dnnl::layer_normalization_forward prim;
    dnnl::memory::desc x_md, stat_md, c_md;
    bool training;
    dnnl::memory mean, var;
  };

  absl::Status RunDnnl(const Tensor& x, const Tensor& scale, const Tensor* bias, Tensor& y,
                       Tensor* mean_t, Tensor* inv_t, int64_t outer, int64_t inner) {
    const bool stats = mean_t || inv_t;
    try {
      Entry& e = cache_.Get({x.dims(), {bias ? 1 : 0, stats ? 1 : 0}}, [&] {
        Entry n;
        n.training = stats;
        n.x_md = PlainDesc({outer, inner}, dt::f32);
        n.stat_md = PlainDesc({outer}, dt::f32);
        n.c_md = PlainDesc({inner}, dt::f32);
        nf flags = nf::use_scale;
        if (bias) flags = flags | nf::use_shift;
        dnnl::layer_normalization_forward::desc d(
            stats ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
            n.x_md, n.stat_md, epsilon_, flags);
        n.prim = dnnl::layer_normalization_forward(
            dnnl::layer_normalization_forward::primitive_desc(d, DnnlEngine()));
        if (stats) {
          n.mean = dnnl::memory(n.stat_md, DnnlEngine());
          n.var = dnnl::memory(n.stat_md, DnnlEngine());
        }
        return n;
      });
      std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, WrapTensor(x, e.x_md)},
                                                    {DNNL_ARG_DST, WrapTensor(y, e.x_md)},
                                                    {DNNL_ARG_SCALE, WrapTensor(scale, e.c_md)}};
      if (bias) args[DNNL_ARG_SHIFT] = WrapTensor(*bias, e.c_md);
      if (e.training) {
        args[DNNL_ARG_MEAN] = e.mean;
        args[DNNL_ARG_VARIANCE] = e.var;
      }
      e.prim.execute(DnnlStream(), args);
      DnnlStream().wait();
      if (e.training) {
        const float* m = static_cast<const float*>(e.mean.get_data_handle());
        const float* v = static_cast<const float*>(e.var.get_data_handle());
        for (int64_t o = 0; o < outer; ++o) {
          if (mean_t) Set(*mean_t, o, m[o]);
          if (inv_t) Set(*inv_t, o, 1.0 / std::sqrt(static_cast<double>(v[o]) + epsilon_));
        }
      }
    } catch (const dnnl::error& err) {
      return absl::UnimplementedError(err.what());  // caller uses the reference loop
    }
    return absl::OkStatus();
  }

  int64_t axis_;
  float epsilon_;
  DataType stat_type_;
  ShapeCache<Entry> cache_;
};

// ---------------------------------------------------------------------------------------
// RMSNormalization (opset 23): x / sqrt(mean(x^2 over dims [axis, rank)) + epsilon) * scale.

class RmsNorm : public Kernel {
 public:
  explicit RmsNorm(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", -1)), epsilon_(info.node.attr_float("epsilon", 1e-5f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    auto axis = NormalizeAxis(axis_, x.rank());
    if (!axis.ok()) return axis.status();
    const Dims inner_dims(x.dims().begin() + *axis, x.dims().end());
    if (auto s = CheckBroadcastsTo(&scale, inner_dims); !s.ok()) return s;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    const int64_t inner = NumElements(inner_dims), outer = inner ? x.numel() / inner : 0;
    const std::vector<double> sc = ExpandTo(&scale, inner_dims, 1);
    ParallelFor(outer, [&](int64_t o) {
      const int64_t base = o * inner;
      double sq = 0;
      for (int64_t i = 0; i < inner; ++i) sq += Get(x, base + i) * Get(x, base + i);
      const double inv = 1.0 / std::sqrt(sq / inner + epsilon_);
      for (int64_t i = 0; i < inner; ++i) Set(y, base + i, Get(x, base + i) * inv * sc[i]);
    }, 64);
    return absl::OkStatus();
  }

 private:
  int64_t axis_;
  float epsilon_;
};

// ---------------------------------------------------------------------------------------
// GroupNormalization: x [N, C, ...] normalized over each group of C / num_groups channels
// and their spatial dims, then scaled per channel (opset 21; per group before 21).

class GroupNorm : public Kernel {
 public:
  explicit GroupNorm(const KernelInfo& info)
      : per_group_scale_(info.opset < 21),
        groups_(info.node.attr_int("num_groups", 0)),
        epsilon_(info.node.attr_float("epsilon", 1e-5f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& scale = *ctx.input(1);
    const Tensor& bias = *ctx.input(2);
    if (x.rank() < 2) return absl::InvalidArgumentError("X must be [N, C, ...], got " + DimsToString(x.dims()));
    const int64_t N = x.dim(0), C = x.dim(1), S = DimProduct(x.dims(), 2, x.rank());
    if (groups_ <= 0 || C % groups_ != 0)
      return absl::InvalidArgumentError("num_groups " + std::to_string(groups_) +
                                        " must be positive and divide the " + std::to_string(C) + " channels");
    const int64_t want = per_group_scale_ ? groups_ : C;
    if (scale.numel() != want || bias.numel() != want)
      return absl::InvalidArgumentError("scale and bias must have " + std::to_string(want) + " elements (" +
                                        (per_group_scale_ ? "one per group" : "one per channel") +
                                        "), got " + DimsToString(scale.dims()) + " and " +
                                        DimsToString(bias.dims()));
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    const int64_t cg = C / groups_, len = cg * S;
    if (x.dtype() == DataType::kFloat) {  // groups in parallel, vectorized sums
      NormalizeFloatGroups(x, y, scale, bias, N, groups_, cg, S, epsilon_, per_group_scale_);
      return absl::OkStatus();
    }
    ParallelFor(N * groups_, [&](int64_t ng) {
      const int64_t base = ng * len, g = ng % groups_;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < len; ++i) mean += Get(x, base + i);
      mean /= std::max<int64_t>(len, 1);
      for (int64_t i = 0; i < len; ++i) var += (Get(x, base + i) - mean) * (Get(x, base + i) - mean);
      const double inv = 1.0 / std::sqrt(var / std::max<int64_t>(len, 1) + epsilon_);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t k = per_group_scale_ ? g : g * cg + i / S;
        Set(y, base + i, (Get(x, base + i) - mean) * inv * Get(scale, k) + Get(bias, k));
      }
    }, 1);
    return absl::OkStatus();
  }

 private:
  bool per_group_scale_;
  int64_t groups_;
  float epsilon_;
};

// ---------------------------------------------------------------------------------------
// LpNormalization: x / ||x||_p along `axis` (p = 1 or 2); a zero norm gives 0.

class LpNorm : public Kernel {
 public:
  explicit LpNorm(const KernelInfo& info)
      : axis_(info.node.attr_int("axis", -1)), p_(info.node.attr_int("p", 2)) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (p_ != 1 && p_ != 2)
      return absl::InvalidArgumentError("attribute p must be 1 or 2, got " + std::to_string(p_));
    auto axis = NormalizeAxis(axis_, std::max(x.rank(), 1));
    if (!axis.ok()) return axis.status();
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    const Dims dims = x.rank() == 0 ? Dims{1} : x.dims();
    const int64_t n = dims[*axis], inner = DimProduct(dims, *axis + 1, static_cast<int>(dims.size()));
    const int64_t outer = DimProduct(dims, 0, *axis);
    ParallelFor(outer * inner, [&](int64_t r) {
      const int64_t base = (r / inner) * n * inner + r % inner;
      double norm = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double v = Get(x, base + k * inner);
        norm += p_ == 1 ? std::abs(v) : v * v;
      }
      if (p_ == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < n; ++k)
        Set(y, base + k * inner, norm == 0 ? 0.0 : Get(x, base + k * inner) / norm);
    }, 256);
    return absl::OkStatus();
  }

 private:
  int64_t axis_, p_;
};

// ---------------------------------------------------------------------------------------
// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes`.

class Mvn : public Kernel {
 public:
  explicit Mvn(const KernelInfo& info) : axes_(info.node.attr_ints("axes", {0, 2, 3})) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const int rank = x.rank();
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes_) {
      auto n = NormalizeAxis(a, rank);
      if (!n.ok()) return n.status();
      reduced[*n] = true;
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    if (x.numel() == 0) return absl::OkStatus();
    // Statistics live in a tensor of x's shape with reduced dims set to 1.
    Dims sdims = x.dims();
    for (int i = 0; i < rank; ++i)
      if (reduced[i]) sdims[i] = 1;
    const int64_t ns = NumElements(sdims), cnt = x.numel() / ns;
    std::vector<double> mean(ns, 0), sq(ns, 0);
    auto sstr = BroadcastStrides(sdims, x.dims());
    ForEachBroadcast(x.dims(), {sstr}, [&](int64_t i, const std::vector<int64_t>& off) {
      mean[off[0]] += Get(x, i);
    });
    for (double& m : mean) m /= cnt;
    ForEachBroadcast(x.dims(), {sstr}, [&](int64_t i, const std::vector<int64_t>& off) {
      const double d = Get(x, i) - mean[off[0]];
      sq[off[0]] += d * d;
    });
    for (double& s : sq) s = std::sqrt(s / cnt) + 1e-9;
    ForEachBroadcast(x.dims(), {sstr}, [&](int64_t i, const std::vector<int64_t>& off) {
      Set(y, i, (Get(x, i) - mean[off[0]]) / sq[off[0]]);
    });
    return absl::OkStatus();
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

void RegisterNormKernels(KernelRegistry& r) {
  const std::vector<DataType> f = {DataType::kFloat, DataType::kDouble, DataType::kFloat16,
                                   DataType::kBfloat16};
  // BatchNormalization: 6 dropped consumed_inputs; 7 dropped is_test; 9 dropped spatial;
  // 14 added training_mode; 15 lets scale/bias and mean/var have their own types.
  r.Add("BatchNormalization", 1, 6, f, Make<BatchNorm>());
  r.Add("BatchNormalization", 7, 8, f, Make<BatchNorm>());
  r.Add("BatchNormalization", 9, 13, f, Make<BatchNorm>());
  r.Add("BatchNormalization", 14, 14, f, Make<BatchNorm>());
  r.Add("BatchNormalization", 15, kMaxOpset, f, Make<BatchNorm>());
  r.Add("LRN", 1, 12, f, Make<Lrn>());
  r.Add("LRN", 13, kMaxOpset, f, Make<Lrn>());
  r.Add("InstanceNormalization", 1, 5, f, Make<InstanceNorm>());
  r.Add("InstanceNormalization", 6, kMaxOpset, f, Make<InstanceNorm>());
  r.Add("LayerNormalization", 17, kMaxOpset, f, Make<LayerNorm>());
  // The same op for graphs of older opsets, written by optimizer/layer_norm_fusion.h.
  KernelDef fused_ln;
  fused_ln.domain = kTandemDomain;
  fused_ln.op = "LayerNormalization";
  fused_ln.types = f;
  fused_ln.create = Make<LayerNorm>();
  r.Add(fused_ln);
  r.Add("RMSNormalization", 23, kMaxOpset, f, Make<RmsNorm>());
  r.Add("GroupNormalization", 18, 20, f, Make<GroupNorm>());
  r.Add("GroupNormalization", 21, kMaxOpset, f, Make<GroupNorm>());
  r.Add("LpNormalization", 1, kMaxOpset, f, Make<LpNorm>());
  r.Add("MeanVarianceNormalization", 9, 12, f, Make<Mvn>());
  r.Add("MeanVarianceNormalization", 13, kMaxOpset, f, Make<Mvn>());
}

}  // namespace tandem::cpu
