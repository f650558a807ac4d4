#include "providers/cpu/kernel_util.h"

#include <algorithm>

namespace tandem::cpu {

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)  // a scalar has no axis: callers index dims with the result
    return absl::InvalidArgumentError("axis " + std::to_string(axis) +
                                      " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

absl::StatusOr<Dims> BroadcastShapes(const Dims& a, const Dims& b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      return absl::InvalidArgumentError("shapes " + DimsToString(a) + " and " + DimsToString(b) +
                                        " cannot be broadcast together");
  }
  return out;
}

absl::StatusOr<Dims> BroadcastShapes(const std::vector<Dims>& shapes) {
  Dims out;
  for (const Dims& s : shapes) {
    auto r = BroadcastShapes(out, s);
    if (!r.ok()) return r.status();
    out = *r;
  }
  return out;
}

std::vector<int64_t> Strides(const Dims& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

std::vector<int64_t> BroadcastStrides(const Dims& in, const Dims& out) {
  std::vector<int64_t> s(out.size(), 0);
  std::vector<int64_t> own = Strides(in);
  size_t lead = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[lead + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

std::vector<int64_t> ReadInt64s(const Tensor& t) { return t.ToInt64Vector(); }

int64_t DimProduct(const Dims& dims, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= dims[i];
  return p;
}

Geo3 MakeGeo3(const Dims& in, const Dims& out, const WindowGeometry& g) {
  Geo3 r;
  const int off = 3 - static_cast<int>(in.size());
  for (int i = 0; i < 3; ++i) {
    const int j = i - off;
    const bool real = j >= 0;
    r.in[i] = real ? in[j] : 1;
    r.out[i] = real ? out[j] : 1;
    r.k[i] = real ? g.kernel[j] : 1;
    r.s[i] = real ? g.strides[j] : 1;
    r.d[i] = real ? g.dilations[j] : 1;
    r.pb[i] = real ? g.pads_begin[j] : 0;
    r.pe[i] = real ? g.pads_end[j] : 0;
  }
  return r;
}



absl::StatusOr<double> ScalarAsDouble(const Tensor* t, const char* what) {
  if (!t) return absl::InvalidArgumentError(std::string("missing input '") + what + "'");
  if (t->numel() != 1)
    return absl::InvalidArgumentError(std::string("input '") + what +
                                      "' must be a scalar, got shape " + DimsToString(t->dims()));
  if (t->dtype() == DataType::kString || t->dtype() == DataType::kUndefined)
    return absl::InvalidArgumentError(std::string("input '") + what + "' must be numeric");
  return t->ElementAsDouble(0);
}

}  // namespace tandem::cpu
