#include "training/data_parallel.h"

#include <algorithm>

namespace tandem::training {

RowShare ShareOf(int64_t rows, int rank, int size) {
  const int64_t base = rows / size, extra = rows % size;
  RowShare s;
  s.begin = rank * base + std::min<int64_t>(rank, extra);
  s.end = s.begin + base + (rank < extra ? 1 : 0);
  return s;
}

absl::StatusOr<Metrics> ReduceMetrics(const Metrics& local, Communicator* comm) {
  if (!comm || comm->size() == 1) return local;
  const double n = static_cast<double>(local.samples);
  double sums[3] = {local.loss * n, std::max(local.accuracy, 0.0) * n, n};
  if (absl::Status st = comm->AllReduceSum(sums, 3); !st.ok()) return st;
  Metrics m;
  m.samples = static_cast<int64_t>(sums[2]);
  m.loss = sums[2] > 0 ? sums[0] / sums[2] : 0;
  m.accuracy = local.accuracy < 0 ? -1 : (sums[2] > 0 ? sums[1] / sums[2] : 0);
  return m;
}

}  // namespace tandem::training
