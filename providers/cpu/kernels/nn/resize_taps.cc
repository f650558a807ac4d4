#include "providers/cpu/kernels/nn/resize_taps.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "graph/numeric_cast.h"

namespace tandem::cpu {

absl::StatusOr<AxisTaps> BuildTaps(const ResizeParams& p, int64_t in, int64_t out, double scale,
                                   double length, double roi_start, double roi_end) {
  AxisTaps t;
  t.begin.reserve(out + 1);
  t.outside.assign(out, 0);
  auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    t.begin.push_back(NumericCast<int64_t>(t.idx.size()));
    const double x = static_cast<double>(o);
    double xo;
    const std::string& c = p.coord;
    if (c == "half_pixel") {
      xo = (x + 0.5) / scale - 0.5;
    } else if (c == "half_pixel_symmetric") {
      double adj = static_cast<double>(out) / (scale * in);
      double offset = in / 2.0 * (1 - adj);
      xo = offset + (x + 0.5) / scale - 0.5;
    } else if (c == "pytorch_half_pixel") {
      xo = length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    } else if (c == "align_corners") {
      xo = length == 1 ? 0.0 : x * (in - 1) / (length - 1);
    } else if (c == "asymmetric") {
      xo = x / scale;
    } else if (c == "tf_half_pixel_for_nn") {
      xo = (x + 0.5) / scale;
    } else if (c == "tf_crop_and_resize") {
      xo = length > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (length - 1)
                      : 0.5 * (roi_start + roi_end) * (in - 1);
      if (xo < 0 || xo > in - 1) {
        t.outside[o] = 1;
        t.idx.push_back(0);
        t.w.push_back(0);
        continue;
      }
    } else {
      return absl::InvalidArgumentError("unsupported coordinate_transformation_mode '" + c + "'");
    }
    if (p.mode == Mode::kNearest) {
      double fl = std::floor(xo);
      double r = xo - fl;
      int64_t i;
      if (p.simple_nearest) {
        i = NumericCast<int64_t>(scale < 1 ? std::ceil(xo) : fl);
      } else if (r == 0) {
        i = NumericCast<int64_t>(fl);
      } else if (p.nearest == "round_prefer_floor") {
        i = NumericCast<int64_t>(r <= 0.5 ? fl : fl + 1);
      } else if (p.nearest == "round_prefer_ceil") {
        i = NumericCast<int64_t>(r < 0.5 ? fl : fl + 1);
      } else if (p.nearest == "floor") {
        i = NumericCast<int64_t>(fl);
      } else if (p.nearest == "ceil") {
        i = NumericCast<int64_t>(fl + 1);
      } else {
        return absl::InvalidArgumentError("unsupported nearest_mode '" + p.nearest + "'");
      }
      t.idx.push_back(clamp(i));
      t.w.push_back(1.0);
      continue;
    }
    // Linear / cubic: taps around floor(xo); an integral xo counts as ratio 1 of the
    // previous cell (as the ONNX reference does), which only matters for exclude_outside.
    int64_t base = NumericCast<int64_t>(std::floor(xo));
    double ratio = xo - base;
    if (ratio == 0) { ratio = 1; --base; }
    const double radius = p.mode == Mode::kLinear ? 1.0 : 2.0;
    const double fs = (p.antialias && scale < 1) ? scale : 1.0;
    const int64_t start = NumericCast<int64_t>(std::floor(-radius / fs)) + 1;
    const size_t first = t.w.size();
    double sum = 0;
    for (int64_t k = start; k <= 1 - start; ++k) {
      double a = std::fabs(fs * (k - ratio));
      double w;
      if (p.mode == Mode::kLinear) {
        w = std::max(0.0, 1 - a);
      } else {
        const double A = p.cubic_a;
        if (a <= 1) w = ((A + 2) * a - (A + 3)) * a * a + 1;
        else if (a < 2) w = ((A * a - 5 * A) * a + 8 * A) * a - 4 * A;
        else w = 0;
      }
      int64_t i = base + k;
      if (p.exclude_outside && (i < 0 || i >= in)) w = 0;
      sum += w;
      t.idx.push_back(clamp(i));
      t.w.push_back(w);
    }
    if ((p.antialias || p.exclude_outside) && sum != 0)
      for (size_t j = first; j < t.w.size(); ++j) t.w[j] /= sum;
    // Drop zero taps (keeps identity axes cheap).
    size_t keep = first;
    for (size_t j = first; j < t.w.size(); ++j)
      if (t.w[j] != 0) { t.idx[keep] = t.idx[j]; t.w[keep] = t.w[j]; ++keep; }
    if (keep == first) { t.idx[keep] = t.idx[first]; t.w[keep] = 0; ++keep; }
    t.idx.resize(keep);
    t.w.resize(keep);
  }
  t.begin.push_back(NumericCast<int64_t>(t.idx.size()));
  return t;
}

bool IsIdentity(const AxisTaps& taps, int64_t in, int64_t out) {
  if (in != out) return false;
  for (int64_t o = 0; o < out; ++o)
    if (taps.outside[o] || taps.begin[o + 1] != taps.begin[o] + 1 || taps.idx[taps.begin[o]] != o ||
        taps.w[taps.begin[o]] != 1.0)
      return false;
  return true;
}

}  // namespace tandem::cpu
