// The MPI communicator: loads libtandem_mpi.so (distributed/mpi_plugin_abi.h; the engine
// itself never links MPI) and joins the job the launcher started (mpirun, or srun where
// the MPI library supports it).
//
// Every MPI call runs on one worker thread, in the order the calls are made, so
// StartAllReduceSum returns at once and the sum runs while the caller computes.
//
// A rank that stops answering must not leave the others waiting forever: every collective
// runs under a watchdog, and one that has not finished after `timeout_seconds` (default
// 30; TANDEM_DISTRIBUTED_TIMEOUT overrides it) prints one line naming this rank, the
// collective and the context the trainer set (its step), then aborts the whole job
// (MPI_Abort). A rank that dies is noticed by the launcher, which ends the others with
// SIGTERM: each then prints one line naming itself and its step before it exits.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "framework/communicator.h"

namespace tandem {

// Loads the plugin, initializes MPI and makes the group the process communicator
// (SetProcessCommunicator), once per process; later calls return the same communicator.
// Errors say what is missing: the plugin (built without MPI), the MPI library, or a
// launcher.
absl::StatusOr<Communicator*> ConnectMpi(double timeout_seconds = 0);

}  // namespace tandem
