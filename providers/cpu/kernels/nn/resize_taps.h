// The source taps of Resize / Upsample along one axis (ONNX's coordinate transforms,
// nearest rounding, linear and cubic weights, antialias, exclude_outside,
// tf_crop_and_resize's extrapolation): for every output coordinate the source indices
// (clamped into the input) and their weights, computed in double. The CPU provider's
// Resize kernels (resize.cc: the reference over any rank, resize_separable.h: two
// adjacent axes of a float tensor) both read them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tandem::cpu {

// Taps of every output coordinate along one axis: output o reads idx[j] with weight w[j]
// for j in [begin[o], begin[o + 1]) (at least one tap each), or is extrapolated where
// outside[o] is set.
struct AxisTaps {
  std::vector<int64_t> begin;   // per output coordinate: first tap in idx/w
  std::vector<int64_t> idx;     // source index (clamped)
  std::vector<double> w;
  std::vector<uint8_t> outside; // tf_crop_and_resize extrapolation
};

enum class Mode { kNearest, kLinear, kCubic };

struct ResizeParams {
  Mode mode = Mode::kNearest;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  bool simple_nearest = false;  // opset < 11: floor when upsampling, ceil when downsampling
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
};

// The taps of an axis of `in` source elements resized to `out`. `scale` is the coordinate
// scale, `length` the resized length used by align_corners (scale * in for scales, the
// output size for sizes); roi_start / roi_end bound tf_crop_and_resize's crop. Zero taps
// are dropped. Errors name an unknown coordinate transform or nearest mode.
absl::StatusOr<AxisTaps> BuildTaps(const ResizeParams& p, int64_t in, int64_t out, double scale,
                                   double length, double roi_start, double roi_end);

// Whether output o reads source o alone with weight 1 for every o (an axis left as it is).
bool IsIdentity(const AxisTaps& taps, int64_t in, int64_t out);

}  // namespace tandem::cpu
