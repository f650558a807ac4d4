// How data-parallel training splits the work (docs/DISTRIBUTED.md): every rank draws the
// same global batches (same seed and shuffle) and takes its contiguous share of each, so K
// ranks train the same model as one process with the same --batch-size; and joining the
// group a launcher started.
#pragma once
#include <cstdint>

#include "absl/status/statusor.h"
#include "framework/communicator.h"
#include "training/metrics.h"

namespace tandem::training {

// Rows [begin, end) of a batch of `rows` that rank `rank` of `size` takes: the first
// rows % size ranks one more than the others (shares differ by at most one row; a rank
// may have none when the batch has fewer rows than there are ranks).
struct RowShare {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};
RowShare ShareOf(int64_t rows, int rank, int size);

// The metrics of all ranks' shares as one (each rank's mean weighted by its samples);
// `local` itself without a communicator or with one rank.
absl::StatusOr<Metrics> ReduceMetrics(const Metrics& local, Communicator* comm);

// The process group of a data-parallel run.
struct DataParallelGroup {
  Communicator* comm = nullptr;  // null: an ordinary run
  int rank = 0, size = 1;
  bool lead() const { return rank == 0; }  // prints progress and writes the files
};

// When `requested` (tandem train --distributed, the C API's distributed=mpi): the MPI group
// this process belongs to, or an error saying how to launch when no launcher started it.
// Otherwise an ordinary run (a program may well train several models in an MPI job).
absl::StatusOr<DataParallelGroup> JoinDataParallel(bool requested);

}  // namespace tandem::training
