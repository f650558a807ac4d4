#include "ops/pad_geometry.h"

#include <numeric>

namespace tandem {

std::optional<PadMode> ParsePadMode(const std::string& name, int opset) {
  if (name == "constant") return PadMode::kConstant;
  if (name == "reflect") return PadMode::kReflect;
  if (name == "edge") return PadMode::kEdge;
  if (name == "wrap" && opset >= 19) return PadMode::kWrap;
  return std::nullopt;
}

absl::StatusOr<PadAmounts> ResolvePadAmounts(const Dims& x, const std::vector<int64_t>& pads,
                                             std::vector<int64_t> axes) {
  const int r = static_cast<int>(x.size());
  if (axes.empty()) {
    axes.resize(r);
    std::iota(axes.begin(), axes.end(), 0);
  }
  const size_t na = axes.size();
  if (pads.size() != 2 * na)
    return absl::InvalidArgumentError("pads " + DimsToString(pads) + " must have " + std::to_string(2 * na) +
                                      " entries for input shape " + DimsToString(x));
  PadAmounts p;
  p.before.assign(r, 0);
  p.after.assign(r, 0);
  for (size_t i = 0; i < na; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r)
      return absl::InvalidArgumentError("axis " + std::to_string(axes[i]) + " is out of range for rank " +
                                        std::to_string(r));
    p.before[a] = pads[i];
    p.after[a] = pads[i + na];
  }
  return p;
}

absl::StatusOr<Dims> PaddedDims(const Dims& x, const PadAmounts& amounts, PadMode mode,
                                const std::string& mode_name, const std::vector<int64_t>& pads) {
  Dims out(x.size(), 0);
  for (size_t d = 0; d < x.size(); ++d) {
    if (__builtin_add_overflow(x[d], amounts.before[d], &out[d]) ||
        __builtin_add_overflow(out[d], amounts.after[d], &out[d]))
      return absl::InvalidArgumentError("pads " + DimsToString(pads) + " overflow axis " + std::to_string(d));
    if (out[d] < 0)
      return absl::InvalidArgumentError("pads " + DimsToString(pads) + " crop axis " + std::to_string(d) +
                                        " below zero");
    if (mode != PadMode::kConstant && x[d] == 0 && out[d] > 0)
      return absl::InvalidArgumentError("cannot pad an empty axis in mode '" + mode_name + "'");
  }
  return out;
}

}  // namespace tandem
