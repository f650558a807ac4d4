// Sliding-window geometry of ONNX Conv, ConvTranspose and the pools: output sizes and
// padding from the node's attributes, shared by every provider's kernels (and by the
// CUDA provider's placement checks, which decline what cuDNN cannot do).
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/node.h"
#include "graph/tensor.h"

namespace tandem {

// Sliding-window geometry (Conv, ConvTranspose input side, pooling) per spatial dim.
struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end, out;
};
// Reads strides/dilations/pads/auto_pad (and ceil_mode when `ceil_mode_attr`) from `node`
// and computes output sizes and padding for input spatial dims `in` and window `kernel`,
// following ONNX Conv/Pool rules. Errors name the bad attribute.
absl::StatusOr<WindowGeometry> ComputeWindowGeometry(const Node& node, const Dims& in,
                                                     const std::vector<int64_t>& kernel,
                                                     bool ceil_mode_attr);

// ConvTranspose output sizes and pads from strides/dilations/pads/output_padding/
// output_shape/auto_pad; pads may come out negative when output_shape asks for more than
// the natural size. Errors name the bad attribute.
absl::StatusOr<WindowGeometry> ComputeTransposedWindowGeometry(const Node& node, const Dims& in,
                                                               const std::vector<int64_t>& kernel);

}  // namespace tandem
