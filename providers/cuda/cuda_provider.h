// The CUDA execution provider (built into the plugin libtandem_cuda.so; the engine loads
// it at run time, see framework/plugin/provider_plugin.h). One device per provider. The stream,
// the cuBLASLt and cuDNN handles and the library workspace belong to the device
// (DeviceContext) and are shared by every provider (so every session) of the process on
// it: sessions that pass device tensors to each other need no events. cuBLASLt for matrix
// products, cuDNN for convolution, pooling and softmax, kernels of our own (.cu) for the
// rest.
//
// Kernels enqueue on stream() and do not synchronize; Copy to the host and Synchronize()
// do. A copy from the host returns before the transfer ends: the host buffer it reads
// (the caller's pinned memory, or a pinned staging block holding pageable data) is held
// until an event recorded after the transfer has completed, so it cannot go back to a
// cache and be overwritten in flight, and the stream is not drained per copy.
// float32 kernels, and the element types of typed_launch.h for Cast, comparisons and
// Where; other types fall back to the CPU through the partitioner.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "framework/plugin/provider_options.h"
#include "providers/cuda/cuda_allocator.h"
#include "providers/cuda/device_context.h"

namespace tandem::cuda {

class CudaProvider : public ExecutionProvider {
 public:
  // A provider of device `index` (its DeviceContext made on first use), computing as
  // `options` say (TF32 or float32 products); fails with the driver's message.
  static absl::StatusOr<std::unique_ptr<CudaProvider>> Create(int index, const ProviderOptions& options = {});
  // For placement previews (plugin_abi.h's create_preview): no driver call, no stream or
  // handles; Capability and the kernel table work, kernels cannot be made (their
  // constructors never run: a preview session builds no plan).
  static std::unique_ptr<CudaProvider> CreatePreview();
  ~CudaProvider() override;

  std::string name() const override { return "cuda"; }
  Device device() const override { return Device{DeviceType::kCuda, index_}; }
  Allocator& allocator() override { return allocator_; }
  Allocator* host_allocator() override { return &pinned_; }
  const KernelRegistry& registry() const override;
  std::optional<double> Capability(const KernelInfo& info) const override;
  double launch_overhead_us() const override;
  double CopyCostUs(int64_t bytes) const override;
  absl::Status Copy(const Tensor& src, Tensor& dst) override;
  absl::Status Synchronize() override;
  std::string description() const override { return description_; }
  void* native_stream() const override { return stream(); }
  absl::Status OrderBefore(void* stream) override;
  // CUDA Graphs (cuda_graph.cc): the shared stream captured on this thread, memory from a
  // private pool of the device allocator meanwhile; the graph holds that pool and the
  // workspace its kernels were given.
  bool SupportsCapture() const override { return context_ != nullptr; }
  absl::Status BeginCapture() override;
  absl::StatusOr<std::unique_ptr<DeviceGraph>> EndCapture() override;
  bool capturing() const { return capturing_; }
  // Copy and Synchronize first wait for a recording another thread is making on this
  // device (its stream would take their work into the graph); on the recording thread
  // itself they fail.
  absl::Status WaitForRecordings() const;

  cudaStream_t stream() const { return context_ ? context_->stream() : nullptr; }
  cublasLtHandle_t cublaslt() const { return context_->cublaslt(); }
  LockedCudnn cudnn() const { return context_->cudnn(); }
  // --precision tf32: matrix products and convolutions may use TF32 tensor-core math.
  bool tf32() const { return options_.precision == Precision::kTf32; }
  // The data-parallel group of this process (ProviderOptions::communicator), or null.
  Communicator* communicator() const { return options_.communicator; }
  DeviceContext* context() const { return context_; }
  CudaAllocator& device_allocator() { return allocator_; }
  // The device's scratch memory for cuBLASLt/cuDNN (DeviceContext::Workspace): it cannot
  // grow while this thread records a graph (the capture then fails; the first, uncaptured
  // run of a shape has grown it already).
  absl::StatusOr<WorkspaceLease> Workspace(size_t bytes);

 private:
  explicit CudaProvider(int index);
  int index_;
  ProviderOptions options_;
  CudaAllocator allocator_;
  CudaAllocator pinned_;
  DeviceContext* context_ = nullptr;  // null in a placement preview
  std::atomic<bool> capturing_{false};
  std::shared_ptr<void> capture_pool_;  // CudaAllocator::OpenPool while capturing
  std::unique_lock<std::mutex> capture_lock_;  // the device's recording slot, while capturing
  std::string description_;

  // Host buffers that asynchronous copies still read, each until its event completes.
  struct InFlight {
    cudaEvent_t done = nullptr;
    std::shared_ptr<Buffer> buffer;
  };
  absl::Status HoldUntilCopied(std::shared_ptr<Buffer> buffer);
  // Releases the buffers whose copies have completed (all of them when `all`, after a sync).
  void ReleaseCopied(bool all);
  std::vector<InFlight> in_flight_;
  std::mutex in_flight_mu_;
};

// The CUDA kernel registry (built once).
const KernelRegistry& CudaKernelRegistry();

}  // namespace tandem::cuda
