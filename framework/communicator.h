// A group of processes training one model data-parallel (docs/DISTRIBUTED.md): this
// process's rank among `size`, and the collectives the training graph's AllReduce kernels
// and the trainer use. One per process, as MPI's world is: the launcher (mpirun, srun)
// starts the processes, ConnectCommunicator() (distributed/mpi_communicator.h) joins them,
// and SetProcessCommunicator makes the group the one kernels see.
#pragma once
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace tandem {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank among the processes on this host (which GPU a rank takes).
  virtual int local_rank() const = 0;
  // One line: the library, and this rank's place ("Open MPI v4.1.4, rank 1 of 3 on vm").
  virtual std::string description() const = 0;
  // Each rank's `data` becomes the element-wise sum over every rank's `data` (`count`
  // values, the same count on every rank). Errors name the operation; a rank that stops
  // answering ends the job instead (see Abort and the watchdog in mpi_communicator.h).
  virtual absl::Status AllReduceSum(float* data, int64_t count) = 0;
  virtual absl::Status AllReduceSum(double* data, int64_t count) = 0;
  // The same sum of floats, started and left to run while the caller goes on: `data` must
  // stay untouched until WaitAllReduce(data) returns. Collectives run in the order they are
  // started (or called), which every rank must keep. The default runs it at once.
  virtual absl::Status StartAllReduceSum(float* data, int64_t count) { return AllReduceSum(data, count); }
  virtual absl::Status WaitAllReduce(const float* data) {
    (void)data;
    return absl::OkStatus();
  }
  // Rank `root`'s `bytes` bytes at `data` into every rank's `data`.
  virtual absl::Status Broadcast(void* data, int64_t bytes, int root) = 0;
  virtual absl::Status Barrier() = 0;
  // Prints `message` (one line) on stderr and ends every process of the job.
  [[noreturn]] virtual void Abort(const std::string& message) = 0;
  // What this rank is doing ("step 12 (epoch 2)"), for the one-line messages that end a
  // job when a rank stops answering.
  virtual void SetContext(const std::string& context) { (void)context; }
  virtual std::string context() const { return ""; }
  // How long one collective may wait for the other ranks before the job is ended (the
  // watchdogs of mpi_communicator.h and of the CUDA provider's NCCL all-reduce).
  virtual double timeout_seconds() const { return 30; }
};

// The communicator the AllReduce kernels use: null unless a data-parallel run set one
// (it is not owned; clear it before it goes).
Communicator* ProcessCommunicator();
void SetProcessCommunicator(Communicator* c);

// The number of processes a launcher started this job with, from its environment
// (Open MPI's mpirun: OMPI_COMM_WORLD_SIZE; Slurm's srun: SLURM_NTASKS; PMIx/PMI:
// PMIX_SIZE... PMI_SIZE), or 0 when no launcher started this process.
int LaunchedWorldSize();

}  // namespace tandem
