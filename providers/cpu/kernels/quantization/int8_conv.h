// QLinearConv's requantizing 2-D convolution on oneDNN's int8 convolution:
//   y[n, m, p] = saturate(round_half_even((sum (x - x_zp) w[m] + bias[m]) * scale[m]) + y_zp)
// x: uint8 or int8 logical [N, C, H, W], stored plain or channels-last ([N, 1, H, W, C],
// providers/cpu/channel_block.h); w: int8 [M, C/group, kh, kw] with zero point 0, the same
// values on every call (packed once); bias: int32 [M] or none; scale: one per output
// channel or one for all; y: uint8 or int8 [N, M, OH, OW], plain or channels-last.
// Callers use it only where Int8DotProductsExact() (int8_matmul.h): the sums are then exact.
// The scaling is oneDNN's float32 ((sum + bias) as float times scale, the zero point added
// before rounding), so a value within float32 rounding of a halfway point can land one
// level away from a float64 evaluation of the definition.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "graph/tensor.h"
#include "ops/window_geometry.h"
#include "providers/cpu/dnnl_util.h"
#include "providers/cpu/host_memory.h"
#include "providers/cpu/packed_weights.h"

namespace tandem::cpu {

class Int8Conv {
 public:
  // x_dims: x's logical dims; geo: the window geometry of its two spatial dims.
  absl::Status Run(const void* x, DataType x_type, const Dims& x_dims, bool x_channels_last, int32_t x_zp,
                   const Tensor& w, int64_t group, const Tensor* bias, const std::vector<float>& scales,
                   int32_t y_zp, Tensor& y, bool y_channels_last, const WindowGeometry& geo);

 private:
  struct Primitive {
    dnnl::convolution_forward prim;
    dnnl::memory::desc x_md, y_md;             // as stored
    dnnl::memory x_view, y_view, x_buf, y_buf;  // buffers where the primitive's layout differs
    HostBuffer x_mem, y_mem;
    std::optional<dnnl::reorder> x_re, y_re;
    std::shared_ptr<const PackedCopy> w_packed;
    dnnl::memory b_view, x_zp_mem, y_zp_mem;
    int32_t x_zp = 0, y_zp = 0;
    std::vector<float> scales;  // the output scales the primitive was made with
    std::unordered_map<int, dnnl::memory> args;
  };
  ShapeCache<Primitive> cache_;
};

// Copies an 8-bit logical [N, C, H, W] tensor between the plain and the channels-last layouts.
absl::Status ReorderChannels8Bit(const void* src, bool src_channels_last, void* dst, DataType type, const Dims& dims);

}  // namespace tandem::cpu
