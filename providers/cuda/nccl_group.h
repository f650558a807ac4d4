// The GPU side of a data-parallel job: one NCCL communicator per device of the process,
// joining the same ranks as the process's Communicator (framework/communicator.h), which
// carries NCCL's id from rank 0 to the others. The CUDA AllReduceStart/AllReduceWait
// kernels (kernels/all_reduce_ops.cc) sum gradient buckets through it.
//
// Sums run on the group's own high-priority stream, so a bucket's reduction overlaps the
// rest of the backward pass: Start makes that stream wait for the work enqueued so far
// on the compute stream, enqueues ncclAllReduce and records an event; Wait makes the
// compute stream wait for that event. No host thread blocks.
//
// A rank that stops answering leaves its peers' sums unfinished on the device. A watchdog
// thread polls each started sum; one not done after the communicator's timeout_seconds(),
// or an asynchronous NCCL error, ends the job through Communicator::Abort with one line
// naming this rank, the sum and the trainer's context (its step).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "absl/status/statusor.h"
#include "framework/communicator.h"
#include "providers/cuda/device_context.h"

namespace tandem::cuda {

class NcclGroup {
 public:
  // The group of `device` over `comm`'s ranks, made on the first call. Making it is
  // collective (rank 0 draws NCCL's id, comm.Broadcast sends it, every rank joins on its
  // device), so each rank's first call must come at the same point of its run: the first
  // gradient bucket of the first step. The group lives as long as the process.
  static absl::StatusOr<NcclGroup*> Of(DeviceContext& device, Communicator& comm);

  // Sums the `count` floats at device address `data` over the ranks, in place, after the
  // work already enqueued on `stream`; returns at once. `data` must not be touched until
  // Wait(data) has been enqueued.
  absl::Status Start(float* data, int64_t count, cudaStream_t stream);
  // Work enqueued on `stream` from now on runs after the sum Start(data) began.
  absl::Status Wait(const float* data, cudaStream_t stream);

  // "NCCL 2.28.9, rank 1 of 2 on cuda:0".
  const std::string& description() const;

  struct State;  // nccl_group.cc

 private:
  explicit NcclGroup(State* state) : state_(state) {}
  State* state_;
};

}  // namespace tandem::cuda
