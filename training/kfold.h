// K-fold cross-validation over one copy of the data: the dataset's rows are laid out twice
// (2N rows, uploaded to the training device once), so that every fold's training rows —
// those after its held-out block, then those before it — are one contiguous range. Each
// batch, the full batch too, and each validation batch is then a view of that copy
// (Tensor::Rows): no row is gathered or copied per step, on any device.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "training/data.h"

namespace tandem::training {

struct RowRange {
  int64_t begin = 0, end = 0;  // [begin, end)
  int64_t size() const { return end - begin; }
  bool operator==(const RowRange& o) const { return begin == o.begin && end == o.end; }
  bool operator!=(const RowRange& o) const { return !(*this == o); }
};

// Fold k of K over N rows, as ranges of the doubled layout (DoubleRows): validation
// rows [k*N/K, (k+1)*N/K), training rows [(k+1)*N/K, N + k*N/K).
struct Fold {
  RowRange validation, training;
};

// K folds of n rows (2 <= k <= n); every row is validated exactly once.
absl::StatusOr<std::vector<Fold>> MakeFolds(int64_t n, int64_t k);

// `d` with its rows twice (2N rows, host): the layout MakeFolds' ranges index.
Dataset DoubleRows(const Dataset& d);

// Rows [r.begin, r.end) of every tensor of `d`: views, no copy.
Dataset RowsView(const Dataset& d, RowRange r);

// `range` cut into consecutive batches of `batch` rows (the last one shorter unless
// drop_last drops it), in order, or shuffled by `rng` when given.
std::vector<RowRange> Batches(RowRange range, int64_t batch, bool drop_last, std::mt19937_64* rng = nullptr);

}  // namespace tandem::training
