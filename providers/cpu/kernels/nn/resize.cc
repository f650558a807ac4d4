// Interpolation kernels: Resize (opset 10-19+), Upsample (7-9) and GridSample (16+).
// Reference C++: per output axis we precompute the source taps (index, weight) for
// every output coordinate, then each output element sums the product of taps over the
// resized axes. Math is in double; results are cast back to the element type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "graph/numeric_cast.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/nn/resize_separable.h"
#include "providers/cpu/kernels/nn/resize_taps.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    double r = std::nearbyint(v);
    r = std::max(r, static_cast<double>(std::numeric_limits<T>::lowest()));
    r = std::min(r, static_cast<double>(std::numeric_limits<T>::max()));
    return static_cast<T>(r);
  } else {
    return static_cast<T>(v);
  }
}

// out[...] = sum over taps of all axes of in[...] * prod(w).
template <typename T>
void Interpolate(const Tensor& x, Tensor& y, const std::vector<AxisTaps>& taps,
                 double extrapolation) {
  const int rank = x.rank();
  const Dims& od = y.dims();
  std::vector<int64_t> is = Strides(x.dims());
  const T* in = x.data<T>();
  T* out = y.data<T>();
  std::vector<int64_t> oi(rank, 0);
  // Recursive sum over axes.
  auto rec = [&](auto&& self, int d, int64_t off) -> double {
    if (d == rank) return static_cast<double>(in[off]);
    const AxisTaps& t = taps[d];
    double s = 0;
    for (int64_t j = t.begin[oi[d]]; j < t.begin[oi[d] + 1]; ++j)
      s += t.w[j] * self(self, d + 1, off + t.idx[j] * is[d]);
    return s;
  };
  const int64_t n = y.numel();
  for (int64_t lin = 0; lin < n; ++lin) {
    bool outside = false;
    for (int d = 0; d < rank; ++d) outside |= taps[d].outside[oi[d]] != 0;
    out[lin] = FromDouble<T>(outside ? extrapolation : rec(rec, 0, 0));
    for (int d = rank - 1; d >= 0; --d) {
      if (++oi[d] < od[d]) break;
      oi[d] = 0;
    }
  }
}

// The transpose of Interpolate: every dY element, times each tap combination's weight,
// added to the x element it was read from (extrapolated outputs read none).
template <typename T>
void InterpolateBackward(const Tensor& dy, Tensor& dx, const std::vector<AxisTaps>& taps) {
  const int rank = dx.rank();
  const Dims& od = dy.dims();
  std::vector<int64_t> is = Strides(dx.dims());
  const T* g = dy.data<T>();
  T* out = dx.data<T>();
  std::fill_n(out, dx.numel(), T(0));
  std::vector<int64_t> oi(rank, 0);
  auto rec = [&](auto&& self, int d, int64_t off, double v) -> void {
    if (d == rank) {
      out[off] += static_cast<T>(v);
      return;
    }
    const AxisTaps& t = taps[d];
    for (int64_t j = t.begin[oi[d]]; j < t.begin[oi[d] + 1]; ++j)
      self(self, d + 1, off + t.idx[j] * is[d], v * t.w[j]);
  };
  for (int64_t lin = 0; lin < dy.numel(); ++lin) {
    bool outside = false;
    for (int d = 0; d < rank; ++d) outside |= taps[d].outside[oi[d]] != 0;
    if (!outside) rec(rec, 0, 0, static_cast<double>(g[lin]));
    for (int d = rank - 1; d >= 0; --d) {
      if (++oi[d] < od[d]) break;
      oi[d] = 0;
    }
  }
}

// Resize and Upsample, and (with `grad`) ai.tandem ResizeGrad(dY, <the forward node's
// inputs>) whose attributes are the forward node's plus `opset` and `upsample` (1 for
// Upsample): dX through the same taps (training/rules/shape.cc). A float resize of at most
// two adjacent axes runs separably (resize_separable.h), anything else on the reference.
// With channel_block (channel_block.h; set by blocked_layout.h on a float Resize of H and W
// alone) x and y are stored blocked and the scales and sizes refer to the logical
// [N, C, H, W], whose N and C must stay.
class Resize : public Kernel {
 public:
  // `upsample` selects Upsample semantics (asymmetric, simple nearest).
  Resize(const KernelInfo& info, bool upsample, bool grad = false)
      : opset_(grad ? static_cast<int>(info.node.attr_int("opset", 11)) : info.opset),
        upsample_(grad ? info.node.attr_int("upsample", 0) != 0 : upsample),
        grad_(grad),
        block_(grad ? 0 : static_cast<int>(info.node.attr_int("channel_block", 0))) {
    upsample = upsample_;
    const Node& n = info.node;
    std::string mode = n.attr_string("mode", "nearest");
    if (mode == "nearest") p_.mode = Mode::kNearest;
    else if (mode == "linear" || mode == "bilinear") p_.mode = Mode::kLinear;
    else if (mode == "cubic" && !upsample) p_.mode = Mode::kCubic;
    else bad_ = "unsupported mode '" + mode + "'";
    if (upsample || opset_ < 11) {
      p_.coord = "asymmetric";
      p_.simple_nearest = true;
    } else {
      p_.coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
      p_.nearest = n.attr_string("nearest_mode", "round_prefer_floor");
      p_.cubic_a = n.attr_float("cubic_coeff_a", -0.75f);
      p_.exclude_outside = n.attr_int("exclude_outside", 0) != 0;
      extrapolation_ = n.attr_float("extrapolation_value", 0.f);
      p_.antialias = opset_ >= 18 && n.attr_int("antialias", 0) != 0;
      if (opset_ >= 18) {
        axes_ = n.attr_ints("axes");
        policy_ = n.attr_string("keep_aspect_ratio_policy", "stretch");
      }
    }
    if (upsample && opset_ < 9) scales_attr_ = n.attr_floats("scales");
  }

  absl::Status Compute(KernelContext& ctx) override {
    if (!bad_.empty()) return absl::InvalidArgumentError(bad_);
    const int first = grad_ ? 1 : 0;  // ResizeGrad: dY comes first
    if (!ctx.input(0) || !ctx.input(first)) return absl::InvalidArgumentError(grad_ ? "dY and X are required" : "X is required");
    const Tensor& x = *ctx.input(first);
    if (block_ && (x.rank() != 5 || x.dtype() != DataType::kFloat))
      return absl::InvalidArgumentError("a channel-blocked Resize takes a float [N, C/B, H, W, B], got " +
                                        DimsToString(x.dims()));
    // The logical dims: those of x, or of the [N, C, H, W] that blocked x stores.
    Dims xd = x.dims();
    if (block_) {
      auto logical = LogicalView(x, block_, 4);
      if (!logical.ok()) return logical.status();
      xd = logical->dims();
    }
    const int rank = static_cast<int>(xd.size());
    // Which input holds what.
    const Tensor* roi = nullptr;
    const Tensor* scales = nullptr;
    const Tensor* sizes = nullptr;
    if (upsample_ || opset_ < 11) {
      if (!(upsample_ && opset_ < 9)) scales = ctx.input(first + 1);
    } else {
      roi = ctx.input(first + 1);
      scales = ctx.input(first + 2);
      sizes = ctx.input(first + 3);
    }
    if (scales && scales->numel() == 0) scales = nullptr;
    if (sizes && sizes->numel() == 0) sizes = nullptr;
    if (roi && roi->numel() == 0) roi = nullptr;
    // Axes that the scales/sizes/roi refer to.
    std::vector<int> axes;
    if (axes_.empty()) {
      for (int i = 0; i < rank; ++i) axes.push_back(i);
    } else {
      for (int64_t a : axes_) {
        auto na = NormalizeAxis(a, rank);
        if (!na.ok()) return na.status();
        axes.push_back(*na);
      }
    }
    const size_t na = axes.size();
    std::vector<double> scale(rank, 1.0), length(rank), roi_s(rank, 0.0), roi_e(rank, 1.0);
    Dims od = xd;
    if (roi) {
      if (roi->numel() != NumericCast<int64_t>(2 * na))
        return absl::InvalidArgumentError("roi must have " + std::to_string(2 * na) +
                                          " values, got " + std::to_string(roi->numel()));
      for (size_t i = 0; i < na; ++i) {
        roi_s[axes[i]] = roi->ElementAsDouble(i);
        roi_e[axes[i]] = roi->ElementAsDouble(na + i);
      }
    }
    const bool crop = p_.coord == "tf_crop_and_resize";
    if (sizes) {
      if (scales) return absl::InvalidArgumentError("only one of scales and sizes may be given");
      std::vector<int64_t> sz = ReadInt64s(*sizes);
      if (sz.size() != na)
        return absl::InvalidArgumentError("sizes must have " + std::to_string(na) +
                                          " values, got " + std::to_string(sz.size()));
      for (int64_t s : sz)
        if (s < 0) return absl::InvalidArgumentError("sizes must be non-negative");
      if (policy_ == "stretch") {
        for (size_t i = 0; i < na; ++i) {
          od[axes[i]] = sz[i];
          scale[axes[i]] = static_cast<double>(sz[i]) / xd[axes[i]];
        }
      } else if (policy_ == "not_larger" || policy_ == "not_smaller") {
        double s = policy_ == "not_larger" ? 1e300 : 0;
        for (size_t i = 0; i < na; ++i) {
          double r = static_cast<double>(sz[i]) / xd[axes[i]];
          s = policy_ == "not_larger" ? std::min(s, r) : std::max(s, r);
        }
        for (size_t i = 0; i < na; ++i) {
          scale[axes[i]] = s;
          od[axes[i]] = NumericCast<int64_t>(std::floor(s * xd[axes[i]] + 0.5));
        }
      } else {
        return absl::InvalidArgumentError("unsupported keep_aspect_ratio_policy '" + policy_ +
                                          "'");
      }
      for (int d = 0; d < rank; ++d) length[d] = static_cast<double>(od[d]);
    } else {
      std::vector<double> sc;
      if (scales) {
        for (int64_t i = 0; i < scales->numel(); ++i) sc.push_back(scales->ElementAsDouble(i));
      } else if (!scales_attr_.empty()) {
        for (float f : scales_attr_) sc.push_back(f);
      } else {
        return absl::InvalidArgumentError("one of scales and sizes must be given");
      }
      if (sc.size() != na)
        return absl::InvalidArgumentError("scales must have " + std::to_string(na) +
                                          " values, got " + std::to_string(sc.size()));
      for (size_t i = 0; i < na; ++i) {
        if (!(sc[i] > 0)) return absl::InvalidArgumentError("scales must be positive");
        scale[axes[i]] = sc[i];
      }
      for (int d = 0; d < rank; ++d) {
        double ext = crop ? roi_e[d] - roi_s[d] : 1.0;
        length[d] = scale[d] * xd[d] * ext;
        od[d] = NumericCast<int64_t>(std::floor(length[d]));
      }
    }
    if (block_ && (od[0] != xd[0] || od[1] != xd[1]))
      return absl::InvalidArgumentError("a channel-blocked Resize keeps N and C; it would write " + DimsToString(od));
    if (grad_ && ctx.input(0)->dims() != od)
      return absl::InvalidArgumentError("dY has shape " + DimsToString(ctx.input(0)->dims()) +
                                        ", the resized output " + DimsToString(od));
    const Dims stored = block_ ? BlockedDims(od, block_) : od;
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), grad_ ? x.dims() : stored);
    if (grad_ && NumElements(od) == 0) {
      return VisitNumericType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        std::fill_n(y.data<T>(), y.numel(), T(0));
      }) ? absl::OkStatus() : absl::InvalidArgumentError("unsupported element type");
    }
    if (!grad_ && y.numel() == 0) return absl::OkStatus();
    if (x.numel() == 0) return absl::InvalidArgumentError("cannot resize an empty input");
    std::vector<AxisTaps> taps;
    for (int d = 0; d < rank; ++d) {
      ResizeParams p = p_;
      // Axes left untouched need no interpolation (also avoids cubic on N and C).
      if (od[d] == xd[d] && scale[d] == 1.0 && !crop) p.mode = Mode::kNearest;
      auto t = BuildTaps(p, xd[d], od[d], scale[d], length[d], roi_s[d], roi_e[d]);
      if (!t.ok()) return t.status();
      taps.push_back(std::move(*t));
    }
    if (grad_) {
      if (x.dtype() == DataType::kFloat) InterpolateBackward<float>(*ctx.input(0), y, taps);
      else if (x.dtype() == DataType::kDouble) InterpolateBackward<double>(*ctx.input(0), y, taps);
      else return absl::InvalidArgumentError("ResizeGrad takes float or double");
      return absl::OkStatus();
    }
    if (x.dtype() == DataType::kFloat) {
      std::optional<resize::SeparableView> view = resize::FindSeparableView(xd, od, taps);
      // Blocked (N and C kept): the logical H and W are the stored axes 2 and 3 of [N, C/B, H, W, B].
      if (view && block_) view = resize::SeparableView{2, x.dim(0) * x.dim(1), xd[2], xd[3], x.dim(4), od[2], od[3]};
      if (view) {
        resize::ResizeSeparable(x.data<float>(), y.data<float>(), *view, taps[view->first_axis],
                                taps[view->first_axis + 1]);
        return absl::OkStatus();
      }
    }
    if (block_) return absl::InvalidArgumentError("a channel-blocked Resize cannot extrapolate");
    bool ok = VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      Interpolate<T>(x, y, taps, extrapolation_);
    });
    if (!ok) return absl::InvalidArgumentError("unsupported element type");
    return absl::OkStatus();
  }

 private:
  int opset_;
  bool upsample_, grad_;
  int block_;  // channel_block: 0 = plain
  ResizeParams p_;
  double extrapolation_ = 0;
  std::vector<int64_t> axes_;
  std::string policy_ = "stretch";
  std::vector<float> scales_attr_;
  std::string bad_;
};

struct ResizeKernel : Resize {
  explicit ResizeKernel(const KernelInfo& info) : Resize(info, false) {}
};
struct UpsampleKernel : Resize {
  explicit UpsampleKernel(const KernelInfo& info) : Resize(info, true) {}
};
struct ResizeGradKernel : Resize {
  explicit ResizeGradKernel(const KernelInfo& info) : Resize(info, false, true) {}
};

// ------------------------------------------------------------------------ GridSample
class GridSample : public Kernel {
 public:
  explicit GridSample(const KernelInfo& info) {
    const Node& n = info.node;
    mode_ = n.attr_string("mode", info.opset >= 20 ? "linear" : "bilinear");
    if (mode_ == "linear") mode_ = "bilinear";
    if (mode_ == "cubic") mode_ = "bicubic";
    padding_ = n.attr_string("padding_mode", "zeros");
    align_ = n.attr_int("align_corners", 0) != 0;
  }

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor* gp = ctx.input(1);
    if (!gp) return absl::InvalidArgumentError("missing input 1 (grid)");
    const Tensor& grid = *gp;
    if (mode_ != "bilinear" && mode_ != "nearest" && mode_ != "bicubic")
      return absl::InvalidArgumentError("unsupported mode '" + mode_ + "'");
    if (padding_ != "zeros" && padding_ != "border" && padding_ != "reflection")
      return absl::InvalidArgumentError("unsupported padding_mode '" + padding_ + "'");
    if (x.rank() == 5) return Compute3d(x, grid, ctx);
    if (x.rank() != 4)
      return absl::InvalidArgumentError("input must be [N, C, H, W] or [N, C, D, H, W], got " +
                                        DimsToString(x.dims()));
    if (grid.rank() != 4 || grid.dim(0) != x.dim(0) || grid.dim(3) != 2)
      return absl::InvalidArgumentError("grid must have shape [N, H_out, W_out, 2], got " +
                                        DimsToString(grid.dims()));
    if (grid.dtype() != x.dtype())
      return absl::InvalidArgumentError("grid must have the input's element type");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const int64_t Ho = grid.dim(1), Wo = grid.dim(2);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {N, C, Ho, Wo});
    if (y.numel() == 0) return absl::OkStatus();
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      const T* g = grid.data<T>();
      T* out = y.data<T>();
      for (int64_t n = 0; n < N; ++n)
        for (int64_t h = 0; h < Ho; ++h)
          for (int64_t w = 0; w < Wo; ++w) {
            const T* gv = g + ((n * Ho + h) * Wo + w) * 2;
            double gx = static_cast<double>(gv[0]), gy = static_cast<double>(gv[1]);
            for (int64_t c = 0; c < C; ++c) {
              const T* plane = in + (n * C + c) * H * W;
              out[((n * C + c) * Ho + h) * Wo + w] =
                  static_cast<T>(Sample(plane, H, W, gx, gy));
            }
          }
    });
    return absl::OkStatus();
  }

 private:
  // Volumetric sampling (opset 20): x [N, C, D, H, W], grid [N, Do, Ho, Wo, 3] holding
  // (x, y, z); trilinear or nearest (bicubic is 2-D only).
  absl::Status Compute3d(const Tensor& x, const Tensor& grid, KernelContext& ctx) {
    if (mode_ == "bicubic") return absl::InvalidArgumentError("cubic mode needs a 4-D input");
    if (grid.rank() != 5 || grid.dim(0) != x.dim(0) || grid.dim(4) != 3)
      return absl::InvalidArgumentError("grid must have shape [N, D_out, H_out, W_out, 3], got " +
                                        DimsToString(grid.dims()));
    if (grid.dtype() != x.dtype()) return absl::InvalidArgumentError("grid must have the input's element type");
    const int64_t N = x.dim(0), C = x.dim(1), D = x.dim(2), H = x.dim(3), W = x.dim(4);
    const int64_t points = grid.dim(1) * grid.dim(2) * grid.dim(3);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {N, C, grid.dim(1), grid.dim(2), grid.dim(3)});
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      const T* g = grid.data<T>();
      T* out = y.data<T>();
      auto at = [&](const T* vol, int64_t z, int64_t yy, int64_t xx) -> double {
        if (z < 0 || z >= D || yy < 0 || yy >= H || xx < 0 || xx >= W) return 0;
        return static_cast<double>(vol[(z * H + yy) * W + xx]);
      };
      for (int64_t n = 0; n < N; ++n)
        for (int64_t p = 0; p < points; ++p) {
          const T* gv = g + (n * points + p) * 3;
          const double ix = Pad(Unnormalize(static_cast<double>(gv[0]), W), W);
          const double iy = Pad(Unnormalize(static_cast<double>(gv[1]), H), H);
          const double iz = Pad(Unnormalize(static_cast<double>(gv[2]), D), D);
          for (int64_t c = 0; c < C; ++c) {
            const T* vol = in + (n * C + c) * D * H * W;
            double v = 0;
            if (mode_ == "nearest") {
              v = at(vol, NumericCast<int64_t>(std::nearbyint(iz)), NumericCast<int64_t>(std::nearbyint(iy)),
                     NumericCast<int64_t>(std::nearbyint(ix)));
            } else {
              const double fx = std::floor(ix), fy = std::floor(iy), fz = std::floor(iz);
              const int64_t x0 = NumericCast<int64_t>(fx), y0 = NumericCast<int64_t>(fy), z0 = NumericCast<int64_t>(fz);
              for (int corner = 0; corner < 8; ++corner) {
                const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
                const double w = (dx ? ix - fx : 1 - (ix - fx)) * (dy ? iy - fy : 1 - (iy - fy)) *
                                 (dz ? iz - fz : 1 - (iz - fz));
                v += w * at(vol, z0 + dz, y0 + dy, x0 + dx);
              }
            }
            out[(n * C + c) * points + p] = static_cast<T>(v);
          }
        }
    });
    return absl::OkStatus();
  }

  double Unnormalize(double v, int64_t size) const {
    return align_ ? (v + 1) / 2 * (size - 1) : ((v + 1) * size - 1) / 2;
  }
  static double Reflect(double v, double twice_lo, double twice_hi) {
    if (twice_lo == twice_hi) return 0;
    double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
    v = std::fabs(v - lo);
    double extra = std::fmod(v, span);
    int64_t flips = NumericCast<int64_t>(std::floor(v / span));
    return flips % 2 == 0 ? extra + lo : span - extra + lo;
  }
  // Applies the padding mode to a source coordinate.
  double Pad(double v, int64_t size) const {
    if (padding_ == "border") return std::min(std::max(v, 0.0), double(size - 1));
    if (padding_ == "reflection") {
      v = align_ ? Reflect(v, 0, 2.0 * (size - 1)) : Reflect(v, -1, 2.0 * size - 1);
      return std::min(std::max(v, 0.0), double(size - 1));
    }
    return v;
  }
  template <typename T>
  static double At(const T* p, int64_t H, int64_t W, int64_t y, int64_t x) {
    if (y < 0 || y >= H || x < 0 || x >= W) return 0;
    return static_cast<double>(p[y * W + x]);
  }
  static double Cubic(double a) {  // A = -0.75 kernel weight at distance a
    const double A = -0.75;
    a = std::fabs(a);
    if (a <= 1) return ((A + 2) * a - (A + 3)) * a * a + 1;
    if (a < 2) return ((A * a - 5 * A) * a + 8 * A) * a - 4 * A;
    return 0;
  }
  template <typename T>
  double Sample(const T* p, int64_t H, int64_t W, double gx, double gy) const {
    double ix = Unnormalize(gx, W), iy = Unnormalize(gy, H);
    if (mode_ == "bicubic") {
      double fx = std::floor(ix), fy = std::floor(iy);
      double tx = ix - fx, ty = iy - fy;
      double s = 0;
      for (int i = 0; i < 4; ++i) {
        double wy = Cubic(i - 1 - ty);
        for (int j = 0; j < 4; ++j) {
          double wx = Cubic(j - 1 - tx);
          double sx = Pad(fx - 1 + j, W), sy = Pad(fy - 1 + i, H);
          s += wy * wx * At(p, H, W, NumericCast<int64_t>(sy), NumericCast<int64_t>(sx));
        }
      }
      return s;
    }
    ix = Pad(ix, W);
    iy = Pad(iy, H);
    if (mode_ == "nearest") {
      return At(p, H, W, NumericCast<int64_t>(std::nearbyint(iy)),
                NumericCast<int64_t>(std::nearbyint(ix)));
    }
    double fx = std::floor(ix), fy = std::floor(iy);
    double tx = ix - fx, ty = iy - fy;
    int64_t x0 = NumericCast<int64_t>(fx), y0 = NumericCast<int64_t>(fy);
    return At(p, H, W, y0, x0) * (1 - tx) * (1 - ty) + At(p, H, W, y0, x0 + 1) * tx * (1 - ty) +
           At(p, H, W, y0 + 1, x0) * (1 - tx) * ty + At(p, H, W, y0 + 1, x0 + 1) * tx * ty;
  }

  std::string mode_, padding_;
  bool align_;
};

}  // namespace

void RegisterResizeKernels(KernelRegistry& r) {
  using DT = DataType;
  const std::vector<DT> ts = {DT::kFloat, DT::kDouble, DT::kFloat16, DT::kBfloat16,
                              DT::kInt8,  DT::kUint8,  DT::kInt32,   DT::kInt64};
  r.Add("Upsample", 7, 8, ts, Make<UpsampleKernel>());
  r.Add("Upsample", 9, 9, ts, Make<UpsampleKernel>());
  r.Add("Resize", 10, 10, ts, Make<ResizeKernel>());
  r.Add("Resize", 11, 12, ts, Make<ResizeKernel>());
  r.Add("Resize", 13, 17, ts, Make<ResizeKernel>());
  r.Add("Resize", 18, 18, ts, Make<ResizeKernel>());
  r.Add("Resize", 19, kMaxOpset, ts, Make<ResizeKernel>());
  r.Add(TandemKernel("ResizeGrad", {DT::kFloat, DT::kDouble}, Make<ResizeGradKernel>()));  // training
  r.Add("GridSample", 16, 19, types::kFloats, Make<GridSample>());
  r.Add("GridSample", 20, kMaxOpset, types::kFloats, Make<GridSample>());
}

}  // namespace tandem::cpu
