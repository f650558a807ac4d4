#include "training/kfold.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tandem::training {

absl::StatusOr<std::vector<Fold>> MakeFolds(int64_t n, int64_t k) {
  if (k < 2 || k > n)
    return absl::InvalidArgumentError("k-fold needs 2 <= K <= the number of samples (" + std::to_string(n) +
                                      "), got K = " + std::to_string(k));
  std::vector<Fold> folds;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t begin = i * n / k, end = (i + 1) * n / k;
    folds.push_back(Fold{{begin, end}, {end, n + begin}});
  }
  return folds;
}

namespace {
Tensor Twice(const Tensor& t) {
  if (!t.defined()) return t;
  Dims dims = t.dims();
  dims[0] *= 2;
  Tensor out = Tensor::Host(t.dtype(), dims);
  const size_t half = t.bytes();
  if (half) {
    std::memcpy(out.raw(), t.raw(), half);
    std::memcpy(static_cast<char*>(out.raw()) + half, t.raw(), half);
  }
  return out;
}
}  // namespace

Dataset DoubleRows(const Dataset& d) {
  Dataset out;
  out.x = Twice(d.x);
  out.y = Twice(d.y);
  for (const auto& [name, t] : d.more) out.more[name] = Twice(t);
  return out;
}

Dataset RowsView(const Dataset& d, RowRange r) {
  Dataset out;
  out.x = d.x.Rows(r.begin, r.end);
  out.y = d.y.Rows(r.begin, r.end);
  for (const auto& [name, t] : d.more) out.more[name] = t.Rows(r.begin, r.end);
  return out;
}

std::vector<RowRange> Batches(RowRange range, int64_t batch, bool drop_last, std::mt19937_64* rng) {
  std::vector<RowRange> out;
  for (int64_t b = range.begin; b < range.end; b += batch) {
    const int64_t e = std::min(range.end, b + batch);
    if (drop_last && e - b < batch && !out.empty()) break;
    out.push_back({b, e});
  }
  if (rng)
    for (size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[(*rng)() % i]);
  return out;
}

}  // namespace tandem::training
