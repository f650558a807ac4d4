#include "providers/cpu/kernel_util.h"

#include <algorithm>

namespace tandem::cpu {

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)  // a scalar has no axis: callers index dims with the result
    return absl::InvalidArgumentError("axis " + std::to_string(axis) +
                                      " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

absl::StatusOr<Dims> BroadcastShapes(const Dims& a, const Dims& b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      return absl::InvalidArgumentError("shapes " + DimsToString(a) + " and " + DimsToString(b) +
                                        " cannot be broadcast together");
  }
  return out;
}

absl::StatusOr<Dims> BroadcastShapes(const std::vector<Dims>& shapes) {
  Dims out;
  for (const Dims& s : shapes) {
    auto r = BroadcastShapes(out, s);
    if (!r.ok()) return r.status();
    out = *r;
  }
  return out;
}

std::vector<int64_t> Strides(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::vector<int64_t> BroadcastStrides(const Dims& in, const Dims& out) {
  std::vector<int64_t> s(out.size(), 0);
  std::vector<int64_t> own = Strides(in);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[lead + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

std::vector<int64_t> ReadInt64s(const Tensor& t) { return t.ToInt64Vector(); }

int64_t DimProduct(const Dims& dims, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= dims[i];
  return p;
}

absl::StatusOr<WindowGeometry> ComputeWindowGeometry(const Node& node, const Dims& in,
                                                     const std::vector<int64_t>& kernel,
                                                     bool ceil_mode_attr) {
  const size_t n = in.size();
  WindowGeometry g;
  g.kernel = kernel;
  g.strides = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  g.dilations = node.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = ceil_mode_attr && node.attr_int("ceil_mode", 0) != 0;
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(what + " (input spatial shape " + DimsToString(in) +
                                      ", kernel " + DimsToString(kernel) + ")");
  };
  if (g.kernel.size() != n) return bad("kernel_shape has " + std::to_string(g.kernel.size()) +
                                       " values, expected " + std::to_string(n));
  if (g.strides.size() != n) return bad("strides must have one value per spatial axis");
  if (g.dilations.size() != n) return bad("dilations must have one value per spatial axis");
  if (pads.size() != 2 * n) return bad("pads must have two values per spatial axis");
  g.pads_begin.assign(pads.begin(), pads.begin() + n);
  g.pads_end.assign(pads.begin() + n, pads.end());
  g.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (g.kernel[i] <= 0) return bad("kernel size must be positive");
    if (g.strides[i] <= 0) return bad("strides must be positive");
    if (g.dilations[i] <= 0) return bad("dilations must be positive");
    if (g.pads_begin[i] < 0 || g.pads_end[i] < 0) return bad("pads must be non-negative");
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t s = g.strides[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = (in[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + eff - in[i]);
      int64_t small = total / 2;
      g.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      g.pads_end[i] = total - g.pads_begin[i];
      continue;
    }
    if (auto_pad == "VALID") {
      g.pads_begin[i] = g.pads_end[i] = 0;
    } else if (auto_pad != "NOTSET" && !auto_pad.empty()) {
      return bad("unknown auto_pad '" + auto_pad + "'");
    }
    const int64_t span = in[i] + g.pads_begin[i] + g.pads_end[i] - eff;
    if (span < 0) return bad("window is larger than the padded input");
    g.out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // Ceil mode never starts a last window inside the end padding (as PyTorch and onnx 1.16+).
    if (ceil_mode && g.out[i] > 1 && (g.out[i] - 1) * s >= in[i] + g.pads_begin[i]) --g.out[i];
  }
  return g;
}

Geo3 MakeGeo3(const Dims& in, const Dims& out, const WindowGeometry& g) {
  Geo3 r;
  const int off = 3 - static_cast<int>(in.size());
  for (int i = 0; i < 3; ++i) {
    const int j = i - off;
    const bool real = j >= 0;
    r.in[i] = real ? in[j] : 1;
    r.out[i] = real ? out[j] : 1;
    r.k[i] = real ? g.kernel[j] : 1;
    r.s[i] = real ? g.strides[j] : 1;
    r.d[i] = real ? g.dilations[j] : 1;
    r.pb[i] = real ? g.pads_begin[j] : 0;
    r.pe[i] = real ? g.pads_end[j] : 0;
  }
  return r;
}

absl::StatusOr<WindowGeometry> ComputeTransposedWindowGeometry(const Node& node, const Dims& in,
                                                               const std::vector<int64_t>& kernel) {
  const size_t n = in.size();
  WindowGeometry g;
  g.kernel = kernel;
  g.strides = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  g.dilations = node.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> out_shape = node.attr_ints("output_shape");
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (g.strides.size() != n || g.dilations.size() != n || pads.size() != 2 * n ||
      out_pad.size() != n || (!out_shape.empty() && out_shape.size() != n))
    return absl::InvalidArgumentError(
        "strides/dilations/output_padding/output_shape need one value per spatial axis and "
        "pads two");
  g.pads_begin.assign(pads.begin(), pads.begin() + n);
  g.pads_end.assign(pads.begin() + n, pads.end());
  g.out.resize(n);
  auto floor_half = [](int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
  for (size_t i = 0; i < n; ++i) {
    if (g.strides[i] <= 0 || g.dilations[i] <= 0 || g.kernel[i] <= 0)
      return absl::InvalidArgumentError("strides, dilations and kernel sizes must be positive");
    const int64_t eff = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t natural = g.strides[i] * (in[i] - 1) + out_pad[i] + eff;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!out_shape.empty() || same) {
      g.out[i] = !out_shape.empty() ? out_shape[i] : in[i] * g.strides[i];
      const int64_t total = natural - g.out[i];
      if (auto_pad == "SAME_UPPER") {
        g.pads_begin[i] = floor_half(total);
        g.pads_end[i] = total - g.pads_begin[i];
      } else {
        g.pads_end[i] = floor_half(total);
        g.pads_begin[i] = total - g.pads_end[i];
      }
    } else {
      if (auto_pad == "VALID") g.pads_begin[i] = g.pads_end[i] = 0;
      if (g.pads_begin[i] < 0 || g.pads_end[i] < 0)
        return absl::InvalidArgumentError("pads must be non-negative");
      g.out[i] = natural - g.pads_begin[i] - g.pads_end[i];
    }
    if (g.out[i] < 0)
      return absl::InvalidArgumentError("output size " + std::to_string(g.out[i]) +
                                        " is negative for input " + DimsToString(in));
  }
  return g;
}

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

}  // namespace tandem::cpu
