// `tandem train --distributed`: joins the data-parallel job a launcher started (mpirun,
// srun), or says how to start one (docs/DISTRIBUTED.md).
#pragma once
#include "absl/status/statusor.h"
#include "providers/communicator.h"

namespace tandem::cli {

struct DistributedRun {
  Communicator* comm = nullptr;  // null: an ordinary run
  int rank = 0, size = 1;
  bool lead() const { return rank == 0; }  // prints progress and writes the files
};

// With --distributed: the MPI group this process belongs to; an error naming how to launch
// when no launcher started it. Without: an ordinary run, or an error when a launcher started
// several processes (each would train its own copy of the model).
absl::StatusOr<DistributedRun> JoinFromFlags(bool distributed);

// The usage lines.
#define TANDEM_DISTRIBUTED_HELP                                                                      \
  "  --distributed             data-parallel training across the processes a launcher started:\n" \
  "                            mpirun -n K tandem train ... --distributed (srun -n K under Slurm).\n" \
  "                            --batch-size stays the global batch; rank 0 prints and writes files\n"

}  // namespace tandem::cli
