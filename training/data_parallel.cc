#include "training/data_parallel.h"

#include <algorithm>
#include <string>

#include "distributed/mpi_communicator.h"

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

absl::StatusOr<DataParallelGroup> JoinDataParallel(bool requested) {
  DataParallelGroup group;
  if (!requested) return group;
  if (LaunchedWorldSize() == 0)
    return absl::FailedPreconditionError(
        "--distributed: no launcher started this process. Start K processes with `mpirun -n K tandem train MODEL "
        "... --distributed` (as root add --allow-run-as-root; under Slurm `srun -n K ...`); a single process "
        "trains without --distributed");
  auto comm = ConnectMpi();
  if (!comm.ok()) return comm.status();
  group.comm = *comm;
  group.rank = group.comm->rank();
  group.size = group.comm->size();
  return group;
}

}  // namespace tandem::training
