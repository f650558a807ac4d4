#include "providers/cuda/nccl_group.h"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/nccl_library.h"

namespace tandem::cuda {
namespace {

using Clock = std::chrono::steady_clock;
// A sum's completion event, held by Wait's table and by the watchdog until both are done.
using Event = std::shared_ptr<CUevent_st>;

absl::StatusOr<Event> NewEvent() {
  cudaEvent_t e = nullptr;
  TANDEM_CUDA_RETURN(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return Event(e, [](cudaEvent_t x) { cudaEventDestroy(x); });
}

}  // namespace

struct NcclGroup::State {
  const NcclLibrary* nccl = nullptr;
  Communicator* comm = nullptr;
  int device = 0;
  double timeout = 30;
  ncclComm_t nccl_comm = nullptr;
  cudaStream_t stream = nullptr;
  Event ready;  // recorded on the compute stream by Start, waited for by `stream`
  std::string description;

  std::mutex mu;
  std::condition_variable cv;
  std::map<const float*, Event> started;  // sums Wait has not yet been called for
  struct InFlight {
    Event done;
    Clock::time_point since;
    int64_t count;
  };
  std::deque<InFlight> in_flight;  // sums not yet seen complete, in start order

  void Watch();
  [[noreturn]] void End(const std::string& why);
};

void NcclGroup::State::End(const std::string& why) {
  char line[640];
  const std::string context = comm->context();
  std::snprintf(line, sizeof line, "error: [distributed] rank %d: %s%s%s; ending the job", comm->rank(), why.c_str(),
                context.empty() ? "" : " at ", context.c_str());
  comm->Abort(line);
}

void NcclGroup::State::Watch() {
  cudaSetDevice(device);
  std::unique_lock<std::mutex> lock(mu);
  for (;;) {
    if (in_flight.empty()) {
      cv.wait(lock);
      continue;
    }
    while (!in_flight.empty()) {
      const cudaError_t e = cudaEventQuery(in_flight.front().done.get());
      if (e == cudaErrorNotReady) break;
      if (e != cudaSuccess) cudaGetLastError();  // a device error: the compute thread reports it
      in_flight.pop_front();
    }
    ncclResult_t async = ncclSuccess;
    if (nccl->async_error(nccl_comm, &async) == ncclSuccess && async != ncclSuccess && async != ncclInProgress) {
      const std::string why = std::string("NCCL failed while summing gradients: ") + nccl->error_string(async);
      lock.unlock();
      End(why);
    }
    if (!in_flight.empty() &&
        Clock::now() - in_flight.front().since > std::chrono::duration<double>(timeout)) {
      char why[160];
      std::snprintf(why, sizeof why,
                    "NCCL all-reduce of %lld floats has not finished after %.0f s (another rank died or hangs)",
                    static_cast<long long>(in_flight.front().count), timeout);
      lock.unlock();
      End(why);
    }
    cv.wait_for(lock, std::chrono::milliseconds(100));
  }
}

absl::StatusOr<NcclGroup*> NcclGroup::Of(DeviceContext& device, Communicator& comm) {
  static std::mutex mu;
  static std::map<int, absl::StatusOr<NcclGroup*>>* groups = new std::map<int, absl::StatusOr<NcclGroup*>>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = groups->find(device.index());
  if (it != groups->end()) return it->second;  // failures too: joining is collective, never retried

  auto make = [&]() -> absl::StatusOr<NcclGroup*> {
    auto nccl = LoadNccl();
    // Rank 0's id, or word that it has none, reaches every rank: none waits for an id
    // that is not coming.
    struct {
      char ok = 0;
      ncclUniqueId id{};
    } message;
    absl::Status made = nccl.status();
    if (comm.rank() == 0 && made.ok()) made = (*nccl)->Check((*nccl)->get_unique_id(&message.id), "ncclGetUniqueId");
    message.ok = made.ok();
    if (absl::Status st = comm.Broadcast(&message, sizeof message, 0); !st.ok()) return st;
    if (!nccl.ok()) return nccl.status();
    if (!message.ok)
      return absl::UnavailableError("rank 0 could not start NCCL" + (made.ok() ? "" : ": " + std::string(made.message())));
    auto* s = new State;
    s->nccl = *nccl;
    s->comm = &comm;
    s->device = device.index();
    s->timeout = comm.timeout_seconds();
    TANDEM_CUDA_RETURN(cudaSetDevice(s->device));
    if (absl::Status st = s->nccl->Check(s->nccl->comm_init_rank(&s->nccl_comm, comm.size(), message.id, comm.rank()),
                                         "ncclCommInitRank");
        !st.ok())
      return st;
    int least = 0, greatest = 0;
    TANDEM_CUDA_RETURN(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    TANDEM_CUDA_RETURN(cudaStreamCreateWithPriority(&s->stream, cudaStreamNonBlocking, greatest));
    auto ready = NewEvent();
    if (!ready.ok()) return ready.status();
    s->ready = *ready;
    s->description = s->nccl->description() + ", rank " + std::to_string(comm.rank()) + " of " +
                     std::to_string(comm.size()) + " on cuda:" + std::to_string(s->device);
    std::thread([s] { s->Watch(); }).detach();  // lives as long as the process, as the group
    return new NcclGroup(s);
  };
  return groups->emplace(device.index(), make()).first->second;
}

absl::Status NcclGroup::Start(float* data, int64_t count, cudaStream_t stream) {
  State& s = *state_;
  auto done = NewEvent();
  if (!done.ok()) return done.status();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.started.count(data))
    return absl::FailedPreconditionError("[distributed] an all-reduce of this buffer is already under way");
  TANDEM_CUDA_RETURN(cudaSetDevice(s.device));
  TANDEM_CUDA_RETURN(cudaEventRecord(s.ready.get(), stream));
  TANDEM_CUDA_RETURN(cudaStreamWaitEvent(s.stream, s.ready.get(), 0));
  if (absl::Status st = s.nccl->Check(s.nccl->all_reduce(data, data, static_cast<size_t>(count), ncclFloat32, ncclSum,
                                                         s.nccl_comm, s.stream),
                                      "ncclAllReduce", s.nccl_comm);
      !st.ok())
    return st;
  TANDEM_CUDA_RETURN(cudaEventRecord(done->get(), s.stream));
  s.started.emplace(data, *done);
  s.in_flight.push_back({*done, Clock::now(), count});
  s.cv.notify_one();
  return absl::OkStatus();
}

absl::Status NcclGroup::Wait(const float* data, cudaStream_t stream) {
  State& s = *state_;
  Event done;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.started.find(data);
    if (it == s.started.end()) return absl::FailedPreconditionError("[distributed] no all-reduce of this buffer was started");
    done = std::move(it->second);
    s.started.erase(it);
  }
  TANDEM_CUDA_RETURN(cudaStreamWaitEvent(stream, done.get(), 0));
  return absl::OkStatus();
}

const std::string& NcclGroup::description() const { return state_->description; }

}  // namespace tandem::cuda
