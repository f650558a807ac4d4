#include "providers/cpu/kernels/nn/resize_separable.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/microkernels/weighted_rows.h"

namespace tandem::cpu::resize {
namespace {

// One axis's taps with float weights, as the loops read them.
struct FloatTaps {
  // `unit`: the elements between neighbours along the axis (the offsets' scale).
  FloatTaps(const AxisTaps& t, int64_t out, int64_t unit)
      : begin(t.begin), idx(t.idx), w(t.w.begin(), t.w.end()), offsets(t.idx.size()) {
    for (int64_t o = 0; o < out && nearest; ++o) nearest = single_unit(o);
    for (size_t j = 0; j < idx.size(); ++j) offsets[j] = idx[j] * unit;
  }
  // Output o copies one source element.
  bool single_unit(int64_t o) const { return begin[o + 1] == begin[o] + 1 && w[begin[o]] == 1.f; }
  const std::vector<int64_t>& begin;
  const std::vector<int64_t>& idx;
  std::vector<float> w;
  std::vector<int64_t> offsets;  // idx * unit
  bool nearest = true;  // every output copies one source element
};

// dst[i] = sum over j < k of w[j] * base[off[j] + i] for i < n: the blend of k vectors of n
// floats, by the widest build of weighted_rows.h from 64 floats on (below, the call costs
// more than the loop: a 14-pixel row).
void WeightedSum(int64_t k, const float* w, const float* base, const int64_t* off, float* dst, int64_t n) {
  static const auto sum = weighted_rows::Builds().best().sum;
  if (n >= 64) {
    sum(base, off, w, k, n, dst);
    return;
  }
  const float* r0 = base + off[0];
  for (int64_t i = 0; i < n; ++i) dst[i] = w[0] * r0[i];
  for (int64_t j = 1; j < k; ++j) {
    const float* r = base + off[j];
    for (int64_t i = 0; i < n; ++i) dst[i] += w[j] * r[i];
  }
}

// dst[ow, inner] = src[w, inner] resized along w by `cols`.
void ResizeRow(const float* src, float* dst, const FloatTaps& cols, int64_t ow, int64_t inner) {
  if (inner == 1 && cols.nearest) {
    for (int64_t o = 0; o < ow; ++o) dst[o] = src[cols.idx[o]];
    return;
  }
  if (inner == 1) {
    for (int64_t o = 0; o < ow; ++o) {
      const int64_t b = cols.begin[o], e = cols.begin[o + 1];
      float acc = cols.w[b] * src[cols.idx[b]];
      for (int64_t j = b + 1; j < e; ++j) acc += cols.w[j] * src[cols.idx[j]];
      dst[o] = acc;
    }
    return;
  }
  for (int64_t o = 0; o < ow; ++o) {  // each output pixel: a blend of source pixels' vectors
    const int64_t b = cols.begin[o];
    if (cols.single_unit(o)) {
      std::memcpy(dst + o * inner, src + cols.idx[b] * inner, sizeof(float) * inner);
      continue;
    }
    WeightedSum(cols.begin[o + 1] - b, cols.w.data() + b, src, cols.offsets.data() + b, dst + o * inner, inner);
  }
}

// The widest range of source rows one output row reads (its taps' span) and the most taps
// of one output row.
std::pair<int64_t, int64_t> RowSpanAndTaps(const AxisTaps& rows, int64_t oh) {
  int64_t span = 1, most = 1;
  for (int64_t o = 0; o < oh; ++o) {
    const auto b = rows.idx.begin() + rows.begin[o], e = rows.idx.begin() + rows.begin[o + 1];
    const auto [lo, hi] = std::minmax_element(b, e);
    span = std::max(span, *hi - *lo + 1);
    most = std::max(most, rows.begin[o + 1] - rows.begin[o]);
  }
  return {span, most};
}

}  // namespace

std::optional<SeparableView> FindSeparableView(const Dims& in, const Dims& out, const std::vector<AxisTaps>& taps) {
  const int rank = static_cast<int>(in.size());
  if (rank < 2 || out.size() != in.size() || taps.size() != in.size()) return std::nullopt;
  std::vector<int> resized;
  for (int d = 0; d < rank; ++d) {
    for (uint8_t outside : taps[d].outside)
      if (outside) return std::nullopt;
    if (!IsIdentity(taps[d], in[d], out[d])) resized.push_back(d);
  }
  if (resized.size() > 2 || (resized.size() == 2 && resized[1] != resized[0] + 1)) return std::nullopt;
  const int first = resized.empty() ? rank - 2 : std::min(resized[0], rank - 2);
  return SeparableView{first, DimProduct(in, 0, first), in[first], in[first + 1], DimProduct(in, first + 2, rank),
                       out[first], out[first + 1]};
}

void ResizeSeparable(const float* x, float* y, const SeparableView& v, const AxisTaps& row_taps,
                     const AxisTaps& col_taps) {
  const FloatTaps rows(row_taps, v.oh, 1), cols(col_taps, v.ow, v.inner);
  const int64_t in_row = v.w * v.inner, out_row = v.ow * v.inner;
  const std::pair<int64_t, int64_t> span_taps = RowSpanAndTaps(row_taps, v.oh);
  const int64_t span = span_taps.first, most_taps = span_taps.second;
  // Tasks of `chunk` output rows of one plane: whole planes where there are enough of them
  // for every thread, else one slice per thread (a slice resizes the source rows it reads
  // itself: the fewer slices, the fewer rows resized twice).
  const int64_t threads = std::max(1, omp_get_max_threads());
  const int64_t chunk = std::max<int64_t>(1, std::min(v.oh, (v.outer * v.oh + threads - 1) / threads));
  const int64_t chunks = (v.oh + chunk - 1) / chunk;
  ParallelForIf(v.outer * v.oh * out_row >= (int64_t{1} << 15), v.outer * chunks, [&](int64_t task) {
    const int64_t plane = task / chunks, oy0 = task % chunks * chunk, oy1 = std::min(v.oh, oy0 + chunk);
    const float* src = x + plane * v.h * in_row;
    float* dst = y + plane * v.oh * out_row;
    // Source rows resized along w, in slot (row mod span): an output row's rows lie within
    // `span` of each other, so they never share a slot.
    std::unique_ptr<float[]> resized(new float[span * out_row]);  // filled before it is read
    std::vector<int64_t> held(span, -1);
    std::vector<int64_t> blend(most_taps);  // offsets in `resized` of the rows output row oy blends
    for (int64_t oy = oy0; oy < oy1; ++oy) {
      const int64_t b = rows.begin[oy], e = rows.begin[oy + 1];
      if (rows.single_unit(oy)) {  // nearest, or an axis left as it is: straight into y
        float* row = dst + oy * out_row;
        if (oy > oy0 && rows.single_unit(oy - 1) && rows.idx[rows.begin[oy - 1]] == rows.idx[b])
          std::memcpy(row, row - out_row, sizeof(float) * out_row);  // the row above, again
        else
          ResizeRow(src + rows.idx[b] * in_row, row, cols, v.ow, v.inner);
        continue;
      }
      for (int64_t j = b; j < e; ++j) {
        const int64_t r = rows.idx[j], slot = r % span;
        if (held[slot] != r) {
          ResizeRow(src + r * in_row, resized.get() + slot * out_row, cols, v.ow, v.inner);
          held[slot] = r;
        }
        blend[j - b] = slot * out_row;
      }
      WeightedSum(e - b, rows.w.data() + b, resized.get(), blend.data(), dst + oy * out_row, out_row);
    }
  });
}

}  // namespace tandem::cpu::resize
