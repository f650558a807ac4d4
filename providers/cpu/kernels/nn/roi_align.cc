// RoiAlign (opsets 10 and 16): bilinear-sampled average or max pooling of regions of
// interest. Sample positions and weights are computed in double once per output bin and
// shared by all channels. Float average pooling (what detectors export) reads X
// channels-last and sums each bin's channels as one weighted sum of its samples' pixels in
// float (microkernels/weighted_rows.h), rois across the OpenMP team; max pooling and the
// other types run reference loops in double.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"
#include "providers/cpu/microkernels/weighted_rows.h"

namespace tandem::cpu {

namespace {

// One bilinear sample: four plane offsets and their weights (all 0 outside the map).
struct Sample {
  int64_t off[4];
  double w[4];
};

Sample BilinearSample(double y, double x, int64_t H, int64_t W) {
  Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
  // Outside the map, or NaN (a NaN box coordinate): no contribution.
  if (!(y >= -1.0 && y <= static_cast<double>(H) && x >= -1.0 && x <= static_cast<double>(W))) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = static_cast<double>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = static_cast<double>(x0);
  } else {
    x1 = x0 + 1;
  }
  const double ly = y - static_cast<double>(y0), lx = x - static_cast<double>(x0);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  s.off[0] = y0 * W + x0;
  s.off[1] = y0 * W + x1;
  s.off[2] = y1 * W + x0;
  s.off[3] = y1 * W + x1;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

template <typename T>
double ToD(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

template <typename T>
T FromD(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

class RoiAlign : public Kernel {
 public:
  explicit RoiAlign(const KernelInfo& info)
      : mode_(info.node.attr_string("mode", "avg")),
        // Opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel.
        ctm_(info.opset >= 16 ? info.node.attr_string("coordinate_transformation_mode",
                                                      "half_pixel")
                              : "output_half_pixel"),
        out_h_(info.node.attr_int("output_height", 1)),
        out_w_(info.node.attr_int("output_width", 1)),
        sampling_ratio_(info.node.attr_int("sampling_ratio", 0)),
        spatial_scale_(info.node.attr_float("spatial_scale", 1.f)) {}

  absl::Status Compute(KernelContext& ctx) override {
    if (mode_ != "avg" && mode_ != "max")
      return absl::InvalidArgumentError("mode must be 'avg' or 'max', got '" + mode_ + "'");
    if (ctm_ != "half_pixel" && ctm_ != "output_half_pixel")
      return absl::InvalidArgumentError(
          "coordinate_transformation_mode must be 'half_pixel' or 'output_half_pixel', got '" +
          ctm_ + "'");
    if (out_h_ <= 0 || out_w_ <= 0)
      return absl::InvalidArgumentError("output_height and output_width must be positive");
    if (sampling_ratio_ < 0)
      return absl::InvalidArgumentError("sampling_ratio must be >= 0");
    const Tensor& x = *ctx.input(0);
    const Tensor* rois = ctx.input(1);
    const Tensor* bidx = ctx.input(2);
    if (!rois || !bidx) return absl::InvalidArgumentError("rois and batch_indices are required");
    if (x.rank() != 4)
      return absl::InvalidArgumentError("X must be 4-D (N, C, H, W), got " +
                                        DimsToString(x.dims()));
    if (rois->rank() != 2 || rois->dim(1) != 4)
      return absl::InvalidArgumentError("rois must have shape (num_rois, 4), got " +
                                        DimsToString(rois->dims()));
    if (rois->dtype() != x.dtype())
      return absl::InvalidArgumentError("rois must have the same type as X");
    const int64_t R = rois->dim(0);
    if (bidx->rank() != 1 || bidx->dim(0) != R)
      return absl::InvalidArgumentError("batch_indices must have shape (" + std::to_string(R) +
                                        "), got " + DimsToString(bidx->dims()));
    if (bidx->dtype() != DataType::kInt64 && bidx->dtype() != DataType::kInt32)
      return absl::InvalidArgumentError("batch_indices must be int64");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const std::vector<int64_t> batch = bidx->ToInt64Vector();
    for (int64_t r = 0; r < R; ++r)
      if (batch[r] < 0 || batch[r] >= N)
        return absl::InvalidArgumentError("batch_indices[" + std::to_string(r) + "] = " +
                                          std::to_string(batch[r]) + " is out of range [0, " +
                                          std::to_string(N) + ")");
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {R, C, out_h_, out_w_});
    if (y.numel() == 0) return absl::OkStatus();
    if (H == 0 || W == 0)
      return absl::InvalidArgumentError("X has an empty spatial dimension");

    absl::Status st = absl::InvalidArgumentError("unsupported element type");
    VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>)
        st = Run<T>(x, *rois, batch, y);
    });
    return st;
  }

 private:
  // One roi's box in the map's coordinates, its bins' sizes and samples per bin side.
  struct RoiGeometry {
    double y1, x1, bin_h, bin_w;
    int64_t gh, gw;
  };

  template <typename T>
  RoiGeometry Geometry(const T* box) const {
    const bool half_pixel = ctm_ == "half_pixel";
    const double offset = half_pixel ? 0.5 : 0.0, scale = spatial_scale_;
    RoiGeometry g;
    g.x1 = ToD(box[0]) * scale - offset;
    g.y1 = ToD(box[1]) * scale - offset;
    const double x2 = ToD(box[2]) * scale - offset;
    const double y2 = ToD(box[3]) * scale - offset;
    double roi_w = x2 - g.x1, roi_h = y2 - g.y1;
    if (!half_pixel) {  // legacy: force malformed ROIs to be at least 1x1
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    g.bin_h = roi_h / static_cast<double>(out_h_);
    g.bin_w = roi_w / static_cast<double>(out_w_);
    // Adaptive grid: ceil(bin size) samples per bin side (none for empty/negative bins).
    auto grid = [&](double bin) -> int64_t {
      if (sampling_ratio_ > 0) return sampling_ratio_;
      return bin > 0 ? static_cast<int64_t>(std::ceil(std::min(bin, 1e9))) : 0;
    };
    g.gh = grid(g.bin_h);
    g.gw = grid(g.bin_w);
    return g;
  }

  // Every roi's geometry, refusing one that needs too many samples (a malformed box).
  template <typename T>
  absl::StatusOr<std::vector<RoiGeometry>> Geometries(const Tensor& rois) const {
    const T* pr = rois.data<T>();
    std::vector<RoiGeometry> out(static_cast<size_t>(rois.dim(0)));
    for (int64_t r = 0; r < rois.dim(0); ++r) {
      out[r] = Geometry(pr + r * 4);
      if (static_cast<double>(out[r].gh) * static_cast<double>(out[r].gw) *
              static_cast<double>(out_h_ * out_w_) >
          static_cast<double>(1 << 26))
        return absl::InvalidArgumentError("roi " + std::to_string(r) +
                                          " needs too many sampling points; is it malformed?");
    }
    return out;
  }

  // The samples of every bin of a roi, bin-major (gh * gw per bin), on an H x W map.
  void Samples(const RoiGeometry& g, int64_t H, int64_t W, std::vector<Sample>* samples) const {
    const int64_t per_bin = g.gh * g.gw;
    samples->resize(static_cast<size_t>(out_h_ * out_w_ * per_bin));
    for (int64_t ph = 0; ph < out_h_; ++ph)
      for (int64_t pw = 0; pw < out_w_; ++pw)
        for (int64_t iy = 0; iy < g.gh; ++iy) {
          const double yy = g.y1 + ph * g.bin_h + (iy + 0.5) * g.bin_h / static_cast<double>(g.gh);
          for (int64_t ix = 0; ix < g.gw; ++ix) {
            const double xx = g.x1 + pw * g.bin_w + (ix + 0.5) * g.bin_w / static_cast<double>(g.gw);
            (*samples)[(ph * out_w_ + pw) * per_bin + iy * g.gw + ix] = BilinearSample(yy, xx, H, W);
          }
        }
  }

  template <typename T>
  absl::Status Run(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch,
                   Tensor& y) {
    auto geometries = Geometries<T>(rois);
    if (!geometries.ok()) return geometries.status();
    if constexpr (std::is_same_v<T, float>) {
      if (mode_ == "avg") {
        RunFloatAverage(x, *geometries, batch, y);
        return absl::OkStatus();
      }
    }
    const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
    const bool is_max = mode_ == "max";
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const int64_t plane = H * W, bins = out_h_ * out_w_;
    std::vector<Sample> samples;
    for (int64_t r = 0; r < R; ++r) {
      const RoiGeometry& g = (*geometries)[r];
      const int64_t per_bin = g.gh * g.gw;
      const double count = static_cast<double>(std::max<int64_t>(per_bin, 1));
      Samples(g, H, W, &samples);
      for (int64_t c = 0; c < C; ++c) {
        const T* src = px + (batch[r] * C + c) * plane;
        T* dst = py + (r * C + c) * bins;
        for (int64_t b = 0; b < bins; ++b) {
          const Sample* s = samples.data() + b * per_bin;
          double acc = 0.0;
          for (int64_t k = 0; k < per_bin; ++k) {
            if (is_max) {
              // Max of the weighted corner values, as the reference implementations do.
              double m = s[k].w[0] * ToD(src[s[k].off[0]]);
              for (int q = 1; q < 4; ++q) m = std::max(m, s[k].w[q] * ToD(src[s[k].off[q]]));
              acc = k == 0 ? m : std::max(acc, m);
            } else {
              for (int q = 0; q < 4; ++q) acc += s[k].w[q] * ToD(src[s[k].off[q]]);
            }
          }
          dst[b] = FromD<T>(is_max ? acc : acc / count);
        }
      }
    }
    return absl::OkStatus();
  }

  // Average pooling of float X: X copied channels-last once, then for each roi (across the
  // team) each bin's C channels = sum of its 4 * gh * gw corner pixels' channels, each
  // weighted by its bilinear weight / (gh * gw), written back to y's [C, bins] plane.
  void RunFloatAverage(const Tensor& x, const std::vector<RoiGeometry>& geometries,
                       const std::vector<int64_t>& batch, Tensor& y) const {
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), plane = H * W;
    const int64_t R = static_cast<int64_t>(geometries.size()), bins = out_h_ * out_w_;
    std::vector<float> xt(static_cast<size_t>(N * plane * C));
    const float* px = x.data<float>();
    ParallelForIf(N * plane * C >= (int64_t{1} << 16), N * plane, [&](int64_t np) {
      const int64_t n = np / plane, p = np % plane;
      float* dst = xt.data() + np * C;
      const float* src = px + n * C * plane + p;
      for (int64_t c = 0; c < C; ++c) dst[c] = src[c * plane];
    });
    const auto& kernels = weighted_rows::Builds().best();
    float* py = y.data<float>();
    ParallelForIf(R > 1 && R * bins * C >= (int64_t{1} << 14), R, [&](int64_t r) {
      const RoiGeometry& g = geometries[r];
      const int64_t per_bin = g.gh * g.gw, taps = 4 * per_bin;
      const float inv_count = 1.f / static_cast<float>(std::max<int64_t>(per_bin, 1));
      std::vector<Sample> samples;
      Samples(g, H, W, &samples);
      std::vector<int64_t> off(static_cast<size_t>(bins * taps));
      std::vector<float> w(off.size()), acc(static_cast<size_t>(bins * C));
      for (int64_t k = 0; k < bins * per_bin; ++k)
        for (int q = 0; q < 4; ++q) {
          off[k * 4 + q] = samples[k].off[q] * C;
          w[k * 4 + q] = static_cast<float>(samples[k].w[q]) * inv_count;
        }
      const float* map = xt.data() + batch[r] * plane * C;
      for (int64_t b = 0; b < bins; ++b)
        kernels.sum(map, off.data() + b * taps, w.data() + b * taps, taps, C, acc.data() + b * C);
      float* dst = py + r * C * bins;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t b = 0; b < bins; ++b) dst[c * bins + b] = acc[b * C + c];
    });
  }

  std::string mode_, ctm_;
  int64_t out_h_, out_w_, sampling_ratio_;
  float spatial_scale_;
};

}  // namespace

void RegisterRoiAlignKernels(KernelRegistry& r) {
  const std::vector<DataType> t = {DataType::kFloat, DataType::kDouble, DataType::kFloat16};
  r.Add("RoiAlign", 10, 15, t, Make<RoiAlign>());
  r.Add("RoiAlign", 16, kMaxOpset, t, Make<RoiAlign>());
}

}  // namespace tandem::cpu
