// ONNX Pad's geometry, shared by the CPU and CUDA Pad kernels: the padding of each dim
// from the op's pads/axes, the padded shape, and where each output position reads from.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "ops/host_device.h"

namespace tandem {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };
// "constant", "reflect", "edge", and "wrap" from opset 19; nullopt for anything else.
std::optional<PadMode> ParsePadMode(const std::string& name, int opset);

// Elements added before / after each dim of x (negative: cropped).
struct PadAmounts {
  std::vector<int64_t> before, after;
};
// `pads` holds the begins then the ends of `axes` (empty: every dim in order), as Pad's
// pads attribute or input does. Errors name a wrong pads length or an axis out of range.
absl::StatusOr<PadAmounts> ResolvePadAmounts(const Dims& x, const std::vector<int64_t>& pads,
                                             std::vector<int64_t> axes);
// The padded shape; errors for overflow, a dim cropped below zero, and padding an empty
// dim in a mode that copies from it. `pads` and `mode_name` are what errors quote.
absl::StatusOr<Dims> PaddedDims(const Dims& x, const PadAmounts& amounts, PadMode mode,
                                const std::string& mode_name, const std::vector<int64_t>& pads);

// The index along a dim of length n (n > 0 unless the mode is constant) that output
// position o reads, or -1 where the constant goes.
TANDEM_HD inline int64_t PadSourceIndex(int64_t o, int64_t before, int64_t n, PadMode mode) {
  int64_t s = o - before;
  if (s >= 0 && s < n) return s;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return s < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((s % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      s = ((s % period) + period) % period;
      return s >= n ? period - s : s;
    }
  }
  return -1;
}

}  // namespace tandem
