// Small helpers shared by CPU kernels: axis handling, broadcasting, strides, and
// reading shape-like inputs. Header-only where templates need it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <omp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "graph/node.h"
#include "graph/tensor.h"
#include "ops/window_geometry.h"

namespace tandem::cpu {

// Maps a possibly negative axis into [0, rank); error if out of range.
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank);
// Numpy-style broadcast of two (or more) shapes; error names both shapes.
absl::StatusOr<Dims> BroadcastShapes(const Dims& a, const Dims& b);
absl::StatusOr<Dims> BroadcastShapes(const std::vector<Dims>& shapes);
// Row-major element strides of `dims`.
std::vector<int64_t> Strides(const Dims& dims);
// Strides of `in` as seen from an output of shape `out` under broadcasting (0 on
// broadcast dims); `in` is right-aligned to `out`.
std::vector<int64_t> BroadcastStrides(const Dims& in, const Dims& out);
// Values of a 1-D (or scalar) integer tensor.
std::vector<int64_t> ReadInt64s(const Tensor& t);
// Product of dims[begin, end).
int64_t DimProduct(const Dims& dims, int begin, int end);
// The value of a one-element numeric input `t` (named `what` in errors: missing, not a
// scalar, not numeric).
absl::StatusOr<double> ScalarAsDouble(const Tensor* t, const char* what);

// Runs f(i) for i in [0, n): across the OpenMP team (static schedule) when `parallel`, else
// on this thread without entering OpenMP at all (even `omp parallel if (false)` costs
// ~0.5 us, more than a small tensor's whole loop).
template <typename F>
inline void ParallelForIf(bool parallel, int64_t n, F&& f) {
  if (parallel) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i);
  } else {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
}
// The same, parallel when n >= grain.
template <typename F>
inline void ParallelFor(int64_t n, F&& f, int64_t grain = 1 << 15) {
  ParallelForIf(n >= grain, n, f);
}

// Runs f(begin, end) over [0, n) items of `size` elements each, in blocks of 2^12 to 2^14
// elements (an equal share per thread when that is less than 2^14, so that a few blocks
// still use every thread): across the OpenMP team once the n items hold 2^15 elements, else
// on this thread. For element-wise loops the compiler vectorizes (size 1), or rows of elements.
template <typename F>
inline void ParallelBlocks(int64_t n, F&& f, int64_t size = 1) {
  size = std::max<int64_t>(size, 1);
  const int64_t threads = std::max(1, omp_get_max_threads());
  const int64_t share = (n + threads - 1) / threads;
  const int64_t block =
      std::max<int64_t>(1, std::max((int64_t{1} << 12) / size, std::min((int64_t{1} << 14) / size, share)));
  ParallelForIf(n * size >= (int64_t{1} << 15), (n + block - 1) / block,
                [&](int64_t b) { f(b * block, std::min(n, (b + 1) * block)); });
}

// Iterates over every output index of `out` shape, calling f(out_linear, in_offsets...)
// with broadcast input offsets. Used by reference elementwise kernels.
template <typename F>
void ForEachBroadcast(const Dims& out, const std::vector<std::vector<int64_t>>& in_strides,
                      F&& f) {
  const int rank = static_cast<int>(out.size());
  const int64_t n = NumElements(out);
  const size_t k = in_strides.size();
  std::vector<int64_t> idx(rank, 0), off(k, 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    f(linear, off);
    for (int d = rank - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t j = 0; j < k; ++j) off[j] += in_strides[j][d];
      if (idx[d] < out[d]) break;
      for (size_t j = 0; j < k; ++j) off[j] -= in_strides[j][d] * idx[d];
      idx[d] = 0;
    }
  }
}

// Calls f(T{}) with a stand-in element type for kernels that only move elements
// (Transpose, Gather, Concat, ...): uint8_t/uint16_t/uint32_t/uint64_t by byte width, and
// std::string for strings (copied element-wise). Returns false for unsupported types.
template <typename F>
bool VisitElementWidth(DataType dtype, F&& f) {
  if (dtype == DataType::kString) { f(std::string{}); return true; }
  switch (SizeOf(dtype)) {
    case 1: f(uint8_t{}); return true;
    case 2: f(uint16_t{}); return true;
    case 4: f(uint32_t{}); return true;
    case 8: f(uint64_t{}); return true;
    default: return false;
  }
}

// Drops size-1 dims of `dims` and merges neighbours whose `strides` are contiguous
// (outer stride == inner stride * inner size), giving an equivalent shorter walk.
inline void CoalesceStrided(const Dims& dims, const std::vector<int64_t>& strides, Dims* out_dims,
                            std::vector<int64_t>* out_strides) {
  out_dims->clear();
  out_strides->clear();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!out_dims->empty() && out_strides->back() == strides[i] * dims[i]) {
      out_dims->back() *= dims[i];
      out_strides->back() = strides[i];
    } else {
      out_dims->push_back(dims[i]);
      out_strides->push_back(strides[i]);
    }
  }
}

// dst[i] = src[offset(i)] for every index i of `dims` in row-major order, where offset is
// the dot product of the index with `src_strides` (element units; 0 repeats/broadcasts,
// negative walks backwards).
template <typename T>
void StridedCopy(const T* src, const Dims& dims, const std::vector<int64_t>& src_strides, T* dst) {
  if (NumElements(dims) == 0) return;
  Dims d;
  std::vector<int64_t> s;
  CoalesceStrided(dims, src_strides, &d, &s);
  if (d.empty()) { dst[0] = src[0]; return; }
  const int rank = static_cast<int>(d.size());
  const int64_t inner = d.back(), inner_stride = s.back();
  const int64_t outer = NumElements(d) / inner;
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* p = src + off;
    if (inner_stride == 1) {
      for (int64_t j = 0; j < inner; ++j) dst[j] = p[j];
    } else if (inner_stride == 0) {
      for (int64_t j = 0; j < inner; ++j) dst[j] = p[0];
    } else {
      for (int64_t j = 0; j < inner; ++j) dst[j] = p[j * inner_stride];
    }
    dst += inner;
    for (int k = rank - 2; k >= 0; --k) {
      off += s[k];
      if (++idx[k] < d[k]) break;
      off -= s[k] * d[k];
      idx[k] = 0;
    }
  }
}

// StridedCopy where the innermost output dim walks the source with a stride (a transpose):
// done in square tiles over (the output dim that reads the source contiguously, the
// innermost dim) so both sides stay in cache, the tiles split across the OpenMP team from
// 2^15 elements. Falls back to StridedCopy when no such pair exists.
template <typename T>
void TransposeCopy(const T* src, const Dims& dims, const std::vector<int64_t>& strides, T* dst) {
  Dims d;
  std::vector<int64_t> s;
  CoalesceStrided(dims, strides, &d, &s);
  const int k = static_cast<int>(d.size());
  int j = -1;
  for (int i = 0; i + 1 < k; ++i)
    if (s[i] == 1) j = i;
  if (k < 2 || s.back() == 1 || j < 0 || NumElements(d) < 256) {
    StridedCopy(src, dims, strides, dst);
    return;
  }
  const std::vector<int64_t> ds = Strides(d);
  std::vector<int> rest;  // the dims walked around each (rows, cols) plane
  for (int i = 0; i < k - 1; ++i)
    if (i != j) rest.push_back(i);
  const int64_t rows = d[j], cols = d[k - 1], rs = ds[j], cs = s[k - 1];
  const int64_t outer = NumElements(d) / (rows * cols);
  constexpr int64_t B = 32;
  const int64_t row_tiles = (rows + B - 1) / B;
  ParallelForIf(NumElements(d) >= (int64_t{1} << 15), outer * row_tiles, [&](int64_t t) {
    int64_t o = t / row_tiles, soff = 0, doff = 0;
    for (int q = static_cast<int>(rest.size()) - 1; q >= 0; --q) {
      const int a = rest[q];
      soff += o % d[a] * s[a];
      doff += o % d[a] * ds[a];
      o /= d[a];
    }
    const int64_t r0 = t % row_tiles * B, r1 = std::min(rows, r0 + B);
    for (int64_t c0 = 0; c0 < cols; c0 += B) {
      const int64_t c1 = std::min(cols, c0 + B);
      for (int64_t r = r0; r < r1; ++r) {
        T* out = dst + doff + r * rs;
        const T* in = src + soff + r;
        for (int64_t c = c0; c < c1; ++c) out[c] = in[c * cs];
      }
    }
  });
}

// Window geometry padded to 3 spatial dims (leading dims of size 1) for the reference
// loops of convolution and pooling kernels and their gradients. `in`/`out` are the
// spatial sizes of the window's input and output (for a transposed convolution, of the
// equivalent forward convolution).
struct Geo3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};
Geo3 MakeGeo3(const Dims& in, const Dims& out, const WindowGeometry& g);

// Error when a dim is negative or the element count of `dims` exceeds 2^48 (guards
// shapes computed from tensor data against overflow before allocating).
inline absl::Status CheckOutputDims(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 48) / d))
      return absl::InvalidArgumentError("output shape " + DimsToString(dims) + " is invalid or too large");
    n *= d;
  }
  return absl::OkStatus();
}

}  // namespace tandem::cpu
