#include "tools/train_distributed.h"

#include <string>

#include "providers/mpi_communicator.h"

namespace tandem::cli {

absl::StatusOr<DistributedRun> JoinFromFlags(bool distributed) {
  const int launched = LaunchedWorldSize();
  DistributedRun run;
  if (!distributed) {
    if (launched > 1)
      return absl::FailedPreconditionError(
          "this process is one of " + std::to_string(launched) +
          " a launcher started, but without --distributed each would train its own copy of the model: add "
          "--distributed to train one model data-parallel, or start a single process");
    return run;
  }
  if (launched == 0)
    return absl::FailedPreconditionError(
        "--distributed: no launcher started this process. Start K processes with `mpirun -n K tandem train MODEL "
        "... --distributed` (as root add --allow-run-as-root; under Slurm `srun -n K ...`); a single process "
        "trains without --distributed");
  auto comm = ConnectMpi();
  if (!comm.ok()) return comm.status();
  run.comm = *comm;
  run.rank = run.comm->rank();
  run.size = run.comm->size();
  return run;
}

}  // namespace tandem::cli
