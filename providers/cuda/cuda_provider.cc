#include "providers/cuda/cuda_provider.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "framework/copy_kernel.h"
#include "placement/cost_model.h"
#include "providers/cuda/cuda_check.h"
#include "providers/cuda/kernels/register.h"

namespace tandem::cuda {

const KernelRegistry& CudaKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry;
    RegisterCopyKernel(*r);
    RegisterAllCudaKernels(*r);
    return r;
  }();
  return *registry;
}

CudaProvider::CudaProvider(int index)
    : index_(index),
      allocator_(CudaAllocator::Kind::kDevice, index),
      pinned_(CudaAllocator::Kind::kPinnedHost, index) {}

absl::StatusOr<std::unique_ptr<CudaProvider>> CudaProvider::Create(int index, const ProviderOptions& options) {
  std::unique_ptr<CudaProvider> p(new CudaProvider(index));
  p->options_ = options;
  auto context = DeviceContext::Of(index);
  if (!context.ok()) return context.status();
  p->context_ = *context;
  TANDEM_CUDA_RETURN(cudaSetDevice(index));
  cudaDeviceProp prop{};
  TANDEM_CUDA_RETURN(cudaGetDeviceProperties(&prop, index));
  char rest[96];
  std::snprintf(rest, sizeof rest, " (cuda:%d, sm_%d%d, %.1f GiB%s)", index, prop.major, prop.minor,
                prop.totalGlobalMem / 1073741824.0, p->tf32() ? ", TF32 products" : "");
  p->description_ = std::string(prop.name) + rest;
  return p;
}

std::unique_ptr<CudaProvider> CudaProvider::CreatePreview() {
  std::unique_ptr<CudaProvider> p(new CudaProvider(0));
  p->description_ = "cuda (placement preview: no device)";
  return p;
}

CudaProvider::~CudaProvider() {
  if (context_) cudaStreamSynchronize(context_->stream());  // the device's context stays
  ReleaseCopied(/*all=*/true);
}

const KernelRegistry& CudaProvider::registry() const { return CudaKernelRegistry(); }

absl::Status CudaProvider::OrderBefore(void* other) {
  if (!context_) return absl::FailedPreconditionError("a placement preview has no stream");
  TANDEM_CUDA_RETURN(cudaSetDevice(index_));
  cudaEvent_t done = nullptr;
  TANDEM_CUDA_RETURN(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  absl::Status st = Check(cudaEventRecord(done, stream()), "cudaEventRecord");
  if (st.ok()) st = Check(cudaStreamWaitEvent(static_cast<cudaStream_t>(other), done, 0), "cudaStreamWaitEvent");
  cudaEventDestroy(done);  // released once the wait is satisfied
  return st;
}

std::optional<double> CudaProvider::Capability(const KernelInfo& info) const {
  if (!FindKernel(info)) return std::nullopt;
  if (!CudaKernelAccepts(info)) return std::nullopt;  // attribute variants we lack
  return EstimateUs(EstimateWork(info), DefaultGpuSpeed());  // not yet calibrated on a GPU
}

double CudaProvider::launch_overhead_us() const { return DefaultGpuSpeed().launch_us; }

double CudaProvider::CopyCostUs(int64_t bytes) const { return GpuCopyCostUs(bytes); }

absl::StatusOr<WorkspaceLease> CudaProvider::Workspace(size_t bytes) {
  if (!context_) return absl::FailedPreconditionError("[cuda] a placement preview has no workspace");
  return context_->Workspace(bytes);
}

absl::Status CudaProvider::Copy(const Tensor& src, Tensor& dst) {
  if (src.bytes() != dst.bytes())
    return absl::InvalidArgumentError("[cuda] copy of " + std::to_string(src.bytes()) + " bytes into " +
                                      std::to_string(dst.bytes()));
  if (src.dtype() == DataType::kString) return absl::UnimplementedError("[cuda] strings stay on the host");
  const size_t n = src.bytes();
  if (n == 0) return absl::OkStatus();
  if (!context_) return absl::FailedPreconditionError("[cuda] a placement preview copies nothing");
  cudaStream_t stream = context_->stream();
  if (absl::Status s = WaitForRecordings(); !s.ok()) return s;
  TANDEM_CUDA_RETURN(cudaSetDevice(index_));
  const bool src_host = src.device().type == DeviceType::kCpu;
  const bool dst_host = dst.device().type == DeviceType::kCpu;
  if (!src_host && !dst_host) {
    TANDEM_CUDA_RETURN(cudaMemcpyAsync(dst.raw(), src.raw(), n, cudaMemcpyDeviceToDevice, stream));
    return absl::OkStatus();
  }
  if (src_host && dst_host) {
    std::memcpy(dst.raw(), src.raw(), n);
    return absl::OkStatus();
  }
  ReleaseCopied(/*all=*/false);
  // Host side through pinned staging when it is ordinary pageable memory.
  const Tensor& host = src_host ? src : dst;
  cudaPointerAttributes attr{};
  const bool pinned = cudaPointerGetAttributes(&attr, host.raw()) == cudaSuccess &&
                      attr.type == cudaMemoryTypeHost;
  cudaGetLastError();
  std::shared_ptr<Buffer> staging;
  void* host_ptr = const_cast<void*>(host.raw());
  if (!pinned) {
    staging = pinned_.Allocate(n);
    if (staging->data) host_ptr = staging->data;  // else: let the driver stage it
  }
  if (src_host) {
    if (host_ptr != src.raw()) std::memcpy(host_ptr, src.raw(), n);
    TANDEM_CUDA_RETURN(cudaMemcpyAsync(dst.raw(), host_ptr, n, cudaMemcpyHostToDevice, stream));
    // The block the transfer reads stays ours until it has been read: the staging block,
    // or the caller's pinned buffer (which could otherwise return to the pinned cache and
    // be refilled while the DMA still reads it). Pageable memory the driver staged itself
    // has been copied out already when cudaMemcpyAsync returns.
    if (staging && staging->data) return HoldUntilCopied(std::move(staging));
    if (pinned) return HoldUntilCopied(src.buffer());
  } else {
    TANDEM_CUDA_RETURN(cudaMemcpyAsync(host_ptr, src.raw(), n, cudaMemcpyDeviceToHost, stream));
    TANDEM_CUDA_RETURN(cudaStreamSynchronize(stream));
    if (host_ptr != dst.raw()) std::memcpy(dst.raw(), host_ptr, n);
  }
  return absl::OkStatus();
}

absl::Status CudaProvider::Synchronize() {
  if (!context_) return absl::OkStatus();  // a placement preview: nothing ever queued
  if (absl::Status s = WaitForRecordings(); !s.ok()) return s;
  TANDEM_CUDA_RETURN(cudaStreamSynchronize(context_->stream()));
  ReleaseCopied(/*all=*/true);
  return absl::OkStatus();
}

absl::Status CudaProvider::HoldUntilCopied(std::shared_ptr<Buffer> buffer) {
  cudaEvent_t done = nullptr;
  TANDEM_CUDA_RETURN(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  if (cudaError_t e = cudaEventRecord(done, stream()); e != cudaSuccess) {
    cudaEventDestroy(done);
    cudaStreamSynchronize(stream());  // the buffer is released on return: the copy must be over
    TANDEM_CUDA_RETURN(e);
  }
  std::lock_guard<std::mutex> lock(in_flight_mu_);
  in_flight_.push_back({done, std::move(buffer)});
  return absl::OkStatus();
}

void CudaProvider::ReleaseCopied(bool all) {
  std::vector<std::shared_ptr<Buffer>> released;  // dropped outside the lock
  {
    std::lock_guard<std::mutex> lock(in_flight_mu_);
    auto keep = in_flight_.begin();
    for (InFlight& f : in_flight_) {
      const cudaError_t state = all ? cudaSuccess : cudaEventQuery(f.done);
      if (state == cudaErrorNotReady) {
        if (&*keep != &f) *keep = std::move(f);
        ++keep;
        continue;
      }
      cudaGetLastError();  // a failed query must not stick to a later call
      cudaEventDestroy(f.done);
      released.push_back(std::move(f.buffer));
    }
    in_flight_.erase(keep, in_flight_.end());
  }
}

}  // namespace tandem::cuda
