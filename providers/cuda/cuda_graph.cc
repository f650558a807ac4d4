// CudaProvider's stream capture (CUDA Graphs, see ExecutionProvider::BeginCapture) and
// the replayable graph it makes.
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "providers/cuda/cuda_check.h"
#include "providers/cuda/cuda_provider.h"

namespace tandem::cuda {
namespace {

std::string DriverError(const char* what, cudaError_t e) {
  cudaGetLastError();  // a failed capture call must not stick to later calls
  return std::string("[cuda] ") + what + ": " + cudaGetErrorString(e);
}

class CudaGraph : public DeviceGraph {
 public:
  CudaGraph(cudaGraphExec_t exec, cudaStream_t stream, int device, std::shared_ptr<void> pool,
            std::vector<std::shared_ptr<Buffer>> workspaces)
      : exec_(exec), stream_(stream), device_(device), pool_(std::move(pool)), workspaces_(std::move(workspaces)) {}
  // A graph still running is freed by the driver when it completes; the pool's blocks and
  // the workspace are reused only by work enqueued after it on the same stream.
  ~CudaGraph() override { cudaGraphExecDestroy(exec_); }

  absl::Status Replay() override {
    TANDEM_CUDA_RETURN(cudaSetDevice(device_));
    if (cudaError_t e = cudaGraphLaunch(exec_, stream_); e != cudaSuccess)
      return absl::InternalError(DriverError("replaying a CUDA graph", e));
    return absl::OkStatus();
  }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
  int device_;
  std::shared_ptr<void> pool_;
  std::vector<std::shared_ptr<Buffer>> workspaces_;  // the device workspace buffers it reads
};

}  // namespace

absl::Status CudaProvider::WaitForRecordings() const {
  if (!context_) return absl::OkStatus();
  DeviceContext::Recording& r = context_->recording();
  if (context_->recording_on_this_thread())
    return absl::FailedPreconditionError("[cuda] no copy to or from the host, and no wait, while recording a CUDA graph");
  std::lock_guard<std::mutex> wait(r.mu);  // another thread's recording ends first
  return absl::OkStatus();
}

absl::Status CudaProvider::BeginCapture() {
  if (!context_) return absl::FailedPreconditionError("[cuda] a placement preview records nothing");
  DeviceContext::Recording& r = context_->recording();
  std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
  if (!lock.owns_lock()) return absl::UnavailableError("[cuda] another session is recording a CUDA graph on this GPU");
  TANDEM_CUDA_RETURN(cudaSetDevice(index_));
  capture_pool_ = allocator_.OpenPool();
  // Thread-local: a call on this thread that would wait for the device or is not allowed
  // in a recording (cudaMalloc outside the allocator, a synchronous copy) fails the
  // capture. Copies and waits of other threads' sessions on this GPU wait for the
  // recording to end (WaitForRecordings); kernels they launched meanwhile would join it
  // (the stream is shared): see SessionOptions::device_graphs.
  if (cudaError_t e = cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal); e != cudaSuccess) {
    allocator_.ClosePool();
    capture_pool_.reset();
    return absl::InternalError(DriverError("starting a CUDA graph capture", e));
  }
  r.thread = std::this_thread::get_id();
  capture_lock_ = std::move(lock);
  capturing_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DeviceGraph>> CudaProvider::EndCapture() {
  if (!capturing_) return absl::FailedPreconditionError("[cuda] no CUDA graph is being recorded");
  capturing_ = false;
  struct Release {  // the device's recording slot, whatever happens below
    CudaProvider* p;
    ~Release() {
      p->context_->recording().thread = std::thread::id();
      if (p->capture_lock_.owns_lock()) p->capture_lock_.unlock();
    }
  } release{this};
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream(), &graph);
  std::vector<std::shared_ptr<Buffer>> workspaces = context_->TakeRecordedWorkspaces();
  allocator_.ClosePool();
  std::shared_ptr<void> pool = std::move(capture_pool_);
  if (ended != cudaSuccess) {
    if (graph) cudaGraphDestroy(graph);
    return absl::InternalError(DriverError("the CUDA graph capture was invalidated", ended));
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) return absl::InternalError(DriverError("instantiating the CUDA graph", made));
  return std::unique_ptr<DeviceGraph>(new CudaGraph(exec, stream(), index_, std::move(pool), std::move(workspaces)));
}

}  // namespace tandem::cuda
