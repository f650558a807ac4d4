#include "ops/slice_geometry.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace tandem {

SliceRange ResolveSliceRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  const int64_t max_step = std::max<int64_t>(dim, 1);
  SliceRange r;
  r.step = std::clamp<int64_t>(step, -max_step, max_step);
  if (dim <= 0) return r;  // nothing to select (and no valid clamp range)
  int64_t s = start < 0 ? start + dim : start;
  int64_t e = end < 0 ? end + dim : end;
  if (r.step > 0) {
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    r.length = e > s ? (e - s + r.step - 1) / r.step : 0;
  } else {
    s = std::clamp<int64_t>(s, 0, dim - 1);
    e = std::clamp<int64_t>(e, -1, dim - 1);
    r.length = s > e ? (s - e + (-r.step) - 1) / (-r.step) : 0;
  }
  r.start = s;
  return r;
}

absl::StatusOr<SliceView> ResolveSlice(const Dims& x, const std::vector<int64_t>& starts,
                                       const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                       std::vector<int64_t> steps) {
  if (starts.size() != ends.size()) return absl::InvalidArgumentError("starts and ends have different lengths");
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return absl::InvalidArgumentError("starts, ends, axes and steps must have the same length");
  const int r = static_cast<int>(x.size());
  SliceView v;
  v.out = x;
  v.strides.assign(r, 1);
  for (int d = r - 2; d >= 0; --d) v.strides[d] = v.strides[d + 1] * x[d + 1];
  const std::vector<int64_t> in_strides = v.strides;
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r)
      return absl::InvalidArgumentError("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                                        std::to_string(r));
    if (seen[a]) return absl::InvalidArgumentError("axis " + std::to_string(axes[i]) + " is repeated");
    seen[a] = true;
    if (steps[i] == 0) return absl::InvalidArgumentError("steps must not be 0");
    const SliceRange range = ResolveSliceRange(starts[i], ends[i], steps[i], x[a]);
    v.out[a] = range.length;
    if (range.length > 0) v.base += range.start * in_strides[a];
    v.strides[a] = in_strides[a] * range.step;
  }
  return v;
}

}  // namespace tandem
