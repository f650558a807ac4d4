// DeviceContext: what every CudaProvider (so every session) of the process shares on one
// GPU, made on first use and kept for the process's life: the stream, the cuBLASLt and
// cuDNN handles bound to it, the library workspace, and the recording slot of CUDA
// Graphs. A trainer's step and its evaluation sessions therefore share one stream (no
// events between them), one set of handles and one workspace, instead of one each.
//
// Threads: cuBLASLt's handle may be used by several threads at once; cuDNN's may not, so
// cudnn() hands it out with the device's cuDNN lock held for the full expression it is
// used in. The workspace is used in stream order, so kernels of any session share it.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "providers/cuda/cuda_allocator.h"

namespace tandem::cuda {

// The cuDNN handle with the device's cuDNN lock held until this temporary is destroyed
// (the end of the call it is passed to). Recursive: a helper taking the handle may take
// it again.
class LockedCudnn {
 public:
  LockedCudnn(cudnnHandle_t handle, std::recursive_mutex& mu) : handle_(handle), lock_(mu) {}
  operator cudnnHandle_t() const { return handle_; }

 private:
  cudnnHandle_t handle_;
  std::unique_lock<std::recursive_mutex> lock_;
};

// Device scratch memory handed to one library call: `data` (null for 0 bytes) stays valid
// while the lease lives. Converts to the void* the library calls take.
struct WorkspaceLease {
  void* data = nullptr;
  std::shared_ptr<Buffer> hold;
  operator void*() const { return data; }
};

class DeviceContext {
 public:
  // The context of device `index`, made (stream, handles) on the first call; the driver's
  // or library's message when that fails.
  static absl::StatusOr<DeviceContext*> Of(int index);

  int index() const { return index_; }
  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t cublaslt() const { return cublaslt_; }
  LockedCudnn cudnn() { return LockedCudnn(cudnn_, cudnn_mu_); }

  // Scratch memory for cuBLASLt/cuDNN of at least `bytes`, grown on demand (the outgrown
  // buffer is freed at the next growth). Hold the lease until the work using it is
  // enqueued: another thread may grow the workspace meanwhile. On the thread recording a
  // CUDA graph it cannot grow (the recorded work reads the current buffer; the capture
  // fails instead), and the buffer it hands out is kept for that graph
  // (TakeRecordedWorkspaces).
  absl::StatusOr<WorkspaceLease> Workspace(size_t bytes);
  std::vector<std::shared_ptr<Buffer>> TakeRecordedWorkspaces();

  // One CUDA graph recording at a time per device, by the thread holding `mu`.
  struct Recording {
    std::mutex mu;
    std::atomic<std::thread::id> thread{};
  };
  Recording& recording() { return recording_; }
  bool recording_on_this_thread() const { return recording_.thread.load() == std::this_thread::get_id(); }

 private:
  explicit DeviceContext(int index);
  int index_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::recursive_mutex cudnn_mu_;
  CudaAllocator allocator_;  // the workspace's
  std::mutex workspace_mu_;
  std::shared_ptr<Buffer> workspace_;
  std::vector<std::shared_ptr<Buffer>> recorded_workspaces_;
  Recording recording_;
};

}  // namespace tandem::cuda
