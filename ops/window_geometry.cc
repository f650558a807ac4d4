#include "ops/window_geometry.h"

#include <algorithm>
#include <string>

namespace tandem {

namespace {
// What Conv, the pools and ConvTranspose read alike: the window, strides and dilations
// (default 1s) in a geometry, the pads (default 0s) and auto_pad.
struct WindowAttributes {
  WindowGeometry g;
  std::vector<int64_t> pads;
  std::string auto_pad;
};
WindowAttributes ReadWindowAttributes(const Node& node, size_t n, const std::vector<int64_t>& kernel) {
  WindowAttributes a;
  a.g.kernel = kernel;
  a.g.strides = node.attr_ints("strides", std::vector<int64_t>(n, 1));
  a.g.dilations = node.attr_ints("dilations", std::vector<int64_t>(n, 1));
  a.pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  a.auto_pad = node.attr_string("auto_pad", "NOTSET");
  return a;
}
// Splits 2n pads (checked by the caller) into begin and end, and sizes `out` for n dims.
void SplitPads(WindowGeometry& g, const std::vector<int64_t>& pads, size_t n) {
  g.pads_begin.assign(pads.begin(), pads.begin() + n);
  g.pads_end.assign(pads.begin() + n, pads.end());
  g.out.resize(n);
}
}  // namespace

absl::StatusOr<WindowGeometry> ComputeWindowGeometry(const Node& node, const Dims& in,
                                                     const std::vector<int64_t>& kernel,
                                                     bool ceil_mode_attr) {
  const size_t n = in.size();
  WindowAttributes a = ReadWindowAttributes(node, n, kernel);
  WindowGeometry& g = a.g;
  const std::string& auto_pad = a.auto_pad;
  const bool ceil_mode = ceil_mode_attr && node.attr_int("ceil_mode", 0) != 0;
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(what + " (input spatial shape " + DimsToString(in) +
                                      ", kernel " + DimsToString(kernel) + ")");
  };
  if (g.kernel.size() != n) return bad("kernel_shape has " + std::to_string(g.kernel.size()) +
                                       " values, expected " + std::to_string(n));
  if (g.strides.size() != n) return bad("strides must have one value per spatial axis");
  if (g.dilations.size() != n) return bad("dilations must have one value per spatial axis");
  if (a.pads.size() != 2 * n) return bad("pads must have two values per spatial axis");
  SplitPads(g, a.pads, n);
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

absl::StatusOr<WindowGeometry> ComputeTransposedWindowGeometry(const Node& node, const Dims& in,
                                                               const std::vector<int64_t>& kernel) {
  const size_t n = in.size();
  WindowAttributes a = ReadWindowAttributes(node, n, kernel);
  WindowGeometry& g = a.g;
  const std::string& auto_pad = a.auto_pad;
  std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  std::vector<int64_t> out_shape = node.attr_ints("output_shape");
  if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (g.strides.size() != n || g.dilations.size() != n || a.pads.size() != 2 * n ||
      out_pad.size() != n || (!out_shape.empty() && out_shape.size() != n))
    return absl::InvalidArgumentError(
        "strides/dilations/output_padding/output_shape need one value per spatial axis and "
        "pads two");
  SplitPads(g, a.pads, n);
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

}  // namespace tandem
