// Helpers shared by control_flow.cc and sequence_ops.cc: slicing a tensor along an axis
// and concatenating / stacking tensors along an axis (any element type, strings too).
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/allocator.h"
#include "graph/tensor.h"

namespace tandem::cpu::seq {

// Copies n elements src[src_off...] -> dst[dst_off...] (element offsets, same dtype).
inline void CopyElements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off,
                         int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DataType::kString) {
    const std::string* s = src.data<std::string>() + src_off;
    std::string* d = dst.data<std::string>() + dst_off;
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
    return;
  }
  const size_t es = SizeOf(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + dst_off * es,
              static_cast<const char*>(src.raw()) + src_off * es, static_cast<size_t>(n) * es);
}

inline int64_t AxisProduct(const Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < d.size(); ++i) p *= d[i];
  return p;
}

// x[..., start:start+len, ...] along `axis` (caller validates the range); with
// keep_axis == false (len must be 1) the axis is dropped.
inline Tensor SliceAxis(Allocator& alloc, const Tensor& x, int axis, int64_t start, int64_t len,
                        bool keep_axis) {
  const Dims& d = x.dims();
  Dims out_dims = d;
  if (keep_axis) out_dims[axis] = len;
  else out_dims.erase(out_dims.begin() + axis);
  Tensor out = AllocateTensor(alloc, x.dtype(), out_dims);
  const int64_t outer = AxisProduct(d, 0, axis), n = d[axis], inner = AxisProduct(d, axis + 1, d.size());
  for (int64_t o = 0; o < outer; ++o)
    CopyElements(x, (o * n + start) * inner, out, o * len * inner, len * inner);
  return out;
}

// Concatenates `items` along `axis` (new_axis: stacks them along a new axis inserted at
// `axis`). `axis` must already be normalised against the output rank. All items must
// have dtype `dtype` and equal dims off the axis; `what` names the items in errors.
inline absl::StatusOr<Tensor> ConcatAxis(Allocator& alloc, const std::vector<Tensor>& items,
                                         int axis, bool new_axis, DataType dtype,
                                         const std::string& what) {
  if (items.empty()) return absl::InvalidArgumentError("cannot concatenate an empty list of " + what);
  Dims base = items[0].dims();
  if (new_axis) base.insert(base.begin() + axis, 1);
  if (axis < 0 || axis >= static_cast<int>(base.size()))
    return absl::InvalidArgumentError("axis " + std::to_string(axis) + " is out of range for " + what);
  int64_t total = 0;
  std::vector<int64_t> lens;
  for (size_t k = 0; k < items.size(); ++k) {
    const Tensor& t = items[k];
    if (!t.is_tensor())
      return absl::InvalidArgumentError(what + " " + std::to_string(k) + " is not a tensor");
    if (t.dtype() != dtype)
      return absl::InvalidArgumentError(what + " " + std::to_string(k) + " has type " +
                                        DataTypeName(t.dtype()) + ", expected " + DataTypeName(dtype));
    Dims d = t.dims();
    if (new_axis) d.insert(d.begin() + axis, 1);
    bool ok = d.size() == base.size();
    for (size_t i = 0; ok && i < d.size(); ++i)
      if (static_cast<int>(i) != axis && d[i] != base[i]) ok = false;
    if (!ok)
      return absl::InvalidArgumentError(what + " " + std::to_string(k) + " has shape " +
                                        DimsToString(t.dims()) + ", incompatible with " +
                                        DimsToString(items[0].dims()));
    lens.push_back(d[axis]);
    total += d[axis];
  }
  Dims out_dims = base;
  out_dims[axis] = total;
  Tensor out = AllocateTensor(alloc, dtype, out_dims);
  const int64_t outer = AxisProduct(base, 0, axis), inner = AxisProduct(base, axis + 1, base.size());
  int64_t pos = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    for (int64_t o = 0; o < outer; ++o)
      CopyElements(items[k], o * lens[k] * inner, out, (o * total + pos) * inner, lens[k] * inner);
    pos += lens[k];
  }
  return out;
}

// Reads a 1-element integer tensor (scalar or [1]) as int64.
inline absl::StatusOr<int64_t> ReadScalarInt(const Tensor& t, const std::string& what) {
  if (!t.is_tensor() || t.numel() != 1 ||
      (t.dtype() != DataType::kInt32 && t.dtype() != DataType::kInt64))
    return absl::InvalidArgumentError(what + " must be a single int32/int64 value, got " +
                                      DataTypeName(t.dtype()) + DimsToString(t.dims()));
  return t.ElementAsInt64(0);
}

}  // namespace tandem::cpu::seq
