// The CUDA execution provider (built into the plugin libtandem_cuda.so; the engine loads
// it at run time, see providers/provider_plugin.h). One device per provider and one stream
// per device, shared by every provider (so every session) of the process: sessions that
// pass device tensors to each other need no events. Each provider has its own library
// handles and workspace, bound to that stream, which the kernels share: cuBLASLt for matrix products, cuDNN for convolution, pooling and
// softmax, kernels of our own (.cu) for the rest.
//
// Kernels enqueue on stream() and do not synchronize; Copy to the host and Synchronize()
// do. A copy from the host returns before the transfer ends: the host buffer it reads
// (the caller's pinned memory, or a pinned staging block holding pageable data) is held
// until an event recorded after the transfer has completed, so it cannot go back to a
// cache and be overwritten in flight, and the stream is not drained per copy.
// Float32 only for now: other types fall back to the CPU through the partitioner.
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
#include "providers/cuda/cuda_allocator.h"
#include "providers/execution_provider.h"
#include "providers/provider_options.h"

namespace tandem::cuda {

class CudaProvider : public ExecutionProvider {
 public:
  // Creates the handles on device `index` (on its shared stream), computing as `options` say (TF32
  // or float32 products); fails with the driver's message.
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
  // CUDA Graphs (cuda_graph.cc): the shared stream captured on this thread, memory from a
  // private pool of the device allocator meanwhile; the graph holds that pool and the
  // workspace its kernels were given.
  bool SupportsCapture() const override { return stream_ != nullptr; }
  absl::Status BeginCapture() override;
  absl::StatusOr<std::unique_ptr<DeviceGraph>> EndCapture() override;
  bool capturing() const { return capturing_; }
  // Copy and Synchronize first wait for a recording another thread is making on this
  // device (its stream would take their work into the graph); on the recording thread
  // itself they fail.
  absl::Status WaitForRecordings() const;

  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t cublaslt() const { return cublaslt_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  // --precision tf32: matrix products and convolutions may use TF32 tensor-core math.
  bool tf32() const { return options_.precision == Precision::kTf32; }
  CudaAllocator& device_allocator() { return allocator_; }
  // Scratch memory for cuBLASLt/cuDNN, grown on demand and reused (stream-ordered). It
  // cannot grow while capturing (the work recorded so far reads the current buffer): the
  // capture then fails, and the first, uncaptured run of a shape has grown it already.
  absl::StatusOr<void*> Workspace(size_t bytes);

 private:
  explicit CudaProvider(int index);
  int index_;
  ProviderOptions options_;
  CudaAllocator allocator_;
  CudaAllocator pinned_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t cublaslt_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::shared_ptr<Buffer> workspace_;
  std::mutex workspace_mu_;
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
