// The arrays cuDNN's N-d tensor, filter, convolution and pooling descriptors take for ONNX
// Conv and the pools (host arithmetic only, no cuDNN call: tests/cuda/cudnn_shapes_test.cc
// checks it on machines without a GPU). cuDNN wants 4-D or 5-D tensors with 2 or 3
// spatial dims, so a 1-D window becomes a 2-D one of height 1; it takes one pad per
// spatial dim, so asymmetric padding is not representable; its pools have no dilation and
// no ceil mode. What it cannot say is declined at placement (accepts.cc) and runs on the CPU.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "ops/window_geometry.h"

namespace tandem::cuda {

struct CudnnConvShape {
  std::vector<int> x_dims, x_strides;   // [N, C, spatial...], packed NCHW strides
  std::vector<int> w_dims;              // [M, C/group, kernel...]
  std::vector<int> y_dims, y_strides;   // [N, M, out...]
  std::vector<int> b_dims, b_strides;   // the bias as [1, M, 1, ...] (same rank)
  std::vector<int> pads, strides, dilations;
  int groups = 1;
  Dims onnx_y_dims;                     // the output in the model's rank
  // The cache key of a plan built for this shape (dims, window and groups).
  std::vector<int64_t> Key() const;
};

// From X [N, C, spatial...] and W [M, C/group, kernel...] with `g` computed for X's spatial
// dims: InvalidArgument when channels or ranks disagree, Unimplemented for asymmetric
// padding, more than 3 spatial dims or sizes past int32.
absl::StatusOr<CudnnConvShape> CudnnConvShapeOf(const Dims& x, const Dims& w, const WindowGeometry& g,
                                                int64_t group);

struct CudnnPoolShape {
  std::vector<int> x_dims, x_strides, y_dims, y_strides;  // [N, C, spatial...], packed
  std::vector<int> window, pads, strides;
  Dims onnx_y_dims;
  std::vector<int64_t> Key() const;
};

// From X [N, C, spatial...] and `g` computed for X's spatial dims (ceil mode included):
// Unimplemented for asymmetric padding, dilation, a ceil-mode window cuDNN would not
// produce, more than 3 spatial dims or sizes past int32.
absl::StatusOr<CudnnPoolShape> CudnnPoolShapeOf(const Dims& x, const WindowGeometry& g);

// Softmax over `axis` of `dims` as cuDNN's channel softmax of an [outer, n, inner, 1]
// tensor: n = dims[axis] and inner the dims after it, or (coerce: opsets before 13) n =
// every dim from axis on and inner = 1. InvalidArgument for an axis out of range,
// Unimplemented past int32.
struct CudnnSoftmaxShape {
  std::vector<int> dims, strides;  // 4-D, packed
};
absl::StatusOr<CudnnSoftmaxShape> CudnnSoftmaxShapeOf(const Dims& dims, int64_t axis, bool coerce);

}  // namespace tandem::cuda
