#include "providers/cuda/cudnn_shapes.h"

#include <limits>
#include <string>

namespace tandem::cuda {

namespace {

std::vector<int> PackedStrides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

// The checks both windows share: rank, symmetric padding, sizes cuDNN's ints hold.
absl::Status CheckWindow(const Dims& x, const Dims& y, const WindowGeometry& g, const char* what) {
  const size_t spatial = x.size() < 2 ? 0 : x.size() - 2;
  if (x.size() < 3) return absl::InvalidArgumentError(std::string(what) + " needs X [N, C, spatial...], got " + DimsToString(x));
  if (spatial > 3) return absl::UnimplementedError(std::string("cuDNN ") + what + " takes up to 3 spatial dims");
  if (g.out.size() != spatial || g.pads_begin.size() != spatial)
    return absl::InvalidArgumentError("window geometry of another rank");
  for (size_t i = 0; i < spatial; ++i) {
    if (g.pads_begin[i] != g.pads_end[i])
      return absl::UnimplementedError("asymmetric padding (" + std::to_string(g.pads_begin[i]) + " before, " +
                                      std::to_string(g.pads_end[i]) + " after) is not expressible in cuDNN");
    if (!FitsInt(g.pads_begin[i]) || !FitsInt(g.strides[i]) || !FitsInt(g.dilations[i]) || !FitsInt(g.kernel[i]))
      return absl::UnimplementedError("window attributes past cuDNN's int sizes");
  }
  if (!FitsInt(NumElements(x)) || !FitsInt(NumElements(y)))
    return absl::UnimplementedError("tensor too large for cuDNN's int sizes");
  return absl::OkStatus();
}

// d as cuDNN's ints, a unit height inserted after N, C when `lift` (1 spatial dim).
std::vector<int> Lifted(const Dims& d, bool lift, int unit = 1) {
  std::vector<int> out(d.begin(), d.end());
  if (lift) out.insert(out.begin() + 2, unit);
  return out;
}

}  // namespace

std::vector<int64_t> CudnnPoolShape::Key() const {
  std::vector<int64_t> k;
  for (const auto* v : {&x_dims, &window, &pads, &strides}) {
    k.push_back(static_cast<int64_t>(v->size()));
    k.insert(k.end(), v->begin(), v->end());
  }
  return k;
}

absl::StatusOr<CudnnPoolShape> CudnnPoolShapeOf(const Dims& x, const WindowGeometry& g) {
  Dims y = {x.size() >= 2 ? x[0] : 0, x.size() >= 2 ? x[1] : 0};
  y.insert(y.end(), g.out.begin(), g.out.end());
  if (absl::Status s = CheckWindow(x, y, g, "pooling"); !s.ok()) return s;
  const size_t spatial = x.size() - 2;
  for (size_t i = 0; i < spatial; ++i) {
    if (g.dilations[i] != 1) return absl::UnimplementedError("cuDNN pooling has no dilation");
    // cuDNN's own output size (floor): a ceil-mode window beyond it is not there.
    const int64_t span = x[i + 2] + 2 * g.pads_begin[i] - g.kernel[i];
    const int64_t floor_out = span < 0 ? 0 : span / g.strides[i] + 1;
    if (g.out[i] != floor_out)
      return absl::UnimplementedError("ceil_mode adds a window cuDNN pooling does not compute");
  }
  CudnnPoolShape s;
  s.onnx_y_dims = y;
  const bool lift = spatial == 1;
  s.x_dims = Lifted(x, lift);
  s.y_dims = Lifted(y, lift);
  s.x_strides = PackedStrides(s.x_dims);
  s.y_strides = PackedStrides(s.y_dims);
  if (lift) {
    s.window.push_back(1);
    s.pads.push_back(0);
    s.strides.push_back(1);
  }
  for (size_t i = 0; i < spatial; ++i) {
    s.window.push_back(static_cast<int>(g.kernel[i]));
    s.pads.push_back(static_cast<int>(g.pads_begin[i]));
    s.strides.push_back(static_cast<int>(g.strides[i]));
  }
  return s;
}

std::vector<int64_t> CudnnConvShape::Key() const {
  std::vector<int64_t> k;
  for (const auto* v : {&x_dims, &w_dims, &pads, &strides, &dilations}) {
    k.push_back(static_cast<int64_t>(v->size()));
    k.insert(k.end(), v->begin(), v->end());
  }
  k.push_back(groups);
  return k;
}

absl::StatusOr<CudnnConvShape> CudnnConvShapeOf(const Dims& x, const Dims& w, const WindowGeometry& g,
                                                int64_t group) {
  if (x.size() < 3 || w.size() != x.size())
    return absl::InvalidArgumentError("Conv needs X [N, C, spatial...] and W of the same rank, got X " +
                                      DimsToString(x) + ", W " + DimsToString(w));
  if (group <= 0 || x[1] != w[1] * group || w[0] % group != 0)
    return absl::InvalidArgumentError("X " + DimsToString(x) + " and W " + DimsToString(w) +
                                      " do not fit group " + std::to_string(group));
  Dims y = {x[0], w[0]};
  y.insert(y.end(), g.out.begin(), g.out.end());
  if (absl::Status s = CheckWindow(x, y, g, "convolution"); !s.ok()) return s;
  if (!FitsInt(NumElements(w))) return absl::UnimplementedError("weights too large for cuDNN's int sizes");
  const size_t spatial = x.size() - 2;
  CudnnConvShape s;
  s.groups = static_cast<int>(group);
  s.onnx_y_dims = y;
  const bool lift = spatial == 1;  // [N, C, L] as [N, C, 1, L]
  s.x_dims = Lifted(x, lift);
  s.w_dims = Lifted(w, lift);
  s.y_dims = Lifted(y, lift);
  s.x_strides = PackedStrides(s.x_dims);
  s.y_strides = PackedStrides(s.y_dims);
  s.b_dims.assign(s.y_dims.size(), 1);
  s.b_dims[1] = s.y_dims[1];
  s.b_strides = PackedStrides(s.b_dims);
  if (lift) {  // the unit height: no padding, stride 1, dilation 1
    s.pads.push_back(0);
    s.strides.push_back(1);
    s.dilations.push_back(1);
  }
  for (size_t i = 0; i < spatial; ++i) {
    s.pads.push_back(static_cast<int>(g.pads_begin[i]));
    s.strides.push_back(static_cast<int>(g.strides[i]));
    s.dilations.push_back(static_cast<int>(g.dilations[i]));
  }
  return s;
}

absl::StatusOr<CudnnSoftmaxShape> CudnnSoftmaxShapeOf(const Dims& dims, int64_t axis, bool coerce) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) return absl::InvalidArgumentError("softmax of a scalar");
  if (axis < -rank || axis >= rank)
    return absl::InvalidArgumentError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= dims[i];
    else if (i == axis || coerce) n *= dims[i];
    else inner *= dims[i];
  }
  if (!FitsInt(outer) || !FitsInt(n) || !FitsInt(inner) || !FitsInt(NumElements(dims)))
    return absl::UnimplementedError("tensor too large for cuDNN's int sizes");
  CudnnSoftmaxShape s;
  s.dims = {static_cast<int>(outer), static_cast<int>(n), static_cast<int>(inner), 1};
  s.strides = PackedStrides(s.dims);
  return s;
}

}  // namespace tandem::cuda
