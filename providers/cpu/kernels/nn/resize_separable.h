// Resize of a float tensor along at most two adjacent axes, one axis at a time: the
// CPU provider's Resize / Upsample (resize.cc) for the images and feature maps networks
// resize (N and C kept, H and W resized, in the plain layout or the channel-blocked one
// of blocked_layout.h) in every mode and coordinate transform but tf_crop_and_resize's
// extrapolation. The tensor is viewed as [outer, H, W, inner]: each needed source row is
// first resized along W (its inner-element vectors, contiguous where inner > 1, blended
// by the column taps), once per row, and each output row is then the blend of those rows
// by the row taps (blends of 64 floats or more by microkernels/weighted_rows.h, per ISA).
// Float math, as ONNX Runtime; the reference kernel (resize.cc) sums in double over any rank.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/tensor.h"
#include "providers/cpu/kernels/nn/resize_taps.h"

namespace tandem::cpu::resize {

// x [outer, h, w, inner] -> y [outer, oh, ow, inner], resized by the taps of axes
// `first_axis` (rows, h -> oh) and first_axis + 1 (columns, w -> ow) of the tensor.
struct SeparableView {
  int first_axis;
  int64_t outer, h, w, inner, oh, ow;
};

// The view of resizing `in` to `out` with `taps` (one per axis) when at most two adjacent
// axes are resized (IsIdentity: the others), no output is extrapolated and the rank is at
// least 2; nullopt otherwise.
std::optional<SeparableView> FindSeparableView(const Dims& in, const Dims& out, const std::vector<AxisTaps>& taps);

// y = x resized as `view` says, by `rows` (taps of the view's h axis) and `cols` (its w
// axis); across the OpenMP team once y has 2^15 elements.
void ResizeSeparable(const float* x, float* y, const SeparableView& view, const AxisTaps& rows,
                     const AxisTaps& cols);

}  // namespace tandem::cpu::resize
