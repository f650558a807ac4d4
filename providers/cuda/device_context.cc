#include "providers/cuda/device_context.h"

#include <map>
#include <string>

#include "providers/cuda/cuda_check.h"

namespace tandem::cuda {

DeviceContext::DeviceContext(int index) : index_(index), allocator_(CudaAllocator::Kind::kDevice, index) {}

absl::StatusOr<DeviceContext*> DeviceContext::Of(int index) {
  static std::mutex mu;
  // Never destroyed: the handles and stream outlive every session, to the process's end.
  static auto* contexts = new std::map<int, DeviceContext*>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = contexts->find(index);
  if (it != contexts->end()) return it->second;
  TANDEM_CUDA_RETURN(cudaSetDevice(index));
  std::unique_ptr<DeviceContext> c(new DeviceContext(index));
  TANDEM_CUDA_RETURN(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking));
  TANDEM_CUDA_RETURN(cublasLtCreate(&c->cublaslt_));
  TANDEM_CUDA_RETURN(cudnnCreate(&c->cudnn_));
  TANDEM_CUDA_RETURN(cudnnSetStream(c->cudnn_, c->stream_));
  return (*contexts)[index] = c.release();
}

absl::StatusOr<WorkspaceLease> DeviceContext::Workspace(size_t bytes) {
  if (bytes == 0) return WorkspaceLease{};
  const bool recording = recording_on_this_thread();
  std::lock_guard<std::mutex> lock(workspace_mu_);
  if (!workspace_ || workspace_->bytes < bytes) {
    if (recording)
      return absl::FailedPreconditionError("[cuda] the workspace would grow (to " + std::to_string(bytes) +
                                           " bytes) while recording a CUDA graph");
    // The old buffer goes back to this allocator's cache once its leases end (work queued
    // on the stream reads it before anything enqueued later can reuse it); buffers
    // outgrown before, no longer leased, go back to the driver, as nothing asks for
    // their size again.
    workspace_.reset();
    allocator_.ReleaseCache();
    workspace_ = allocator_.Allocate(bytes);
    if (!workspace_->data) {
      const std::string why = allocator_.last_error();
      workspace_.reset();
      return absl::ResourceExhaustedError("workspace: " + why);
    }
  }
  if (recording && (recorded_workspaces_.empty() || recorded_workspaces_.back() != workspace_))
    recorded_workspaces_.push_back(workspace_);
  return WorkspaceLease{workspace_->data, workspace_};
}

std::vector<std::shared_ptr<Buffer>> DeviceContext::TakeRecordedWorkspaces() {
  std::vector<std::shared_ptr<Buffer>> taken;
  std::lock_guard<std::mutex> lock(workspace_mu_);
  taken.swap(recorded_workspaces_);
  return taken;
}

}  // namespace tandem::cuda
