#include "providers/cuda/cuda_allocator.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "graph/resource_limits.h"

namespace tandem::cuda {

struct CudaAllocator::State {
  Kind kind;
  int device_index;
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_lists;  // bucket size -> cached pointers
  size_t in_use = 0, peak = 0, cached = 0, driver_allocations = 0;
  std::string last_error;

  void* DriverAlloc(size_t bytes) {
    void* p = nullptr;
    cudaSetDevice(device_index);
    cudaError_t e = kind == Kind::kDevice ? cudaMalloc(&p, bytes) : cudaMallocHost(&p, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    ++driver_allocations;
    return p;
  }
  void DriverFree(void* p) {
    cudaSetDevice(device_index);
    if (kind == Kind::kDevice) cudaFree(p);
    else cudaFreeHost(p);
  }
  void ReleaseCacheLocked() {
    for (auto& [size, list] : free_lists)
      for (void* p : list) DriverFree(p);
    free_lists.clear();
    cached = 0;
  }
};

size_t CudaAllocator::BucketSize(size_t bytes) {
  constexpr size_t kSmallStep = 512, kLargeStep = 2u << 20, kLarge = 1u << 20;
  if (bytes == 0) return kSmallStep;
  if (bytes < kLarge) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
}

CudaAllocator::CudaAllocator(Kind kind, int device_index) : state_(std::make_shared<State>()) {
  state_->kind = kind;
  state_->device_index = device_index;
}

CudaAllocator::~CudaAllocator() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->ReleaseCacheLocked();
}

Device CudaAllocator::device() const {
  return state_->kind == Kind::kDevice ? Device{DeviceType::kCuda, state_->device_index}
                                       : Device{DeviceType::kCpu, 0};
}

uint64_t CudaAllocator::Limit() const {
  if (state_->kind == Kind::kPinnedHost) return MaxMemoryBytes();
  return GetResourceLimits().max_memory_bytes;  // 0 unless set: cudaMalloc knows the device
}

std::shared_ptr<Buffer> CudaAllocator::Allocate(size_t bytes) {
  auto buf = std::make_shared<Buffer>();
  buf->bytes = bytes;
  buf->device = device();
  const uint64_t limit = Limit();
  const std::string what = state_->kind == Kind::kDevice ? "GPU memory: " : "pinned host memory: ";
  if (std::string why = BufferOverLimit(bytes, limit); !why.empty()) {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->last_error = what + why;
    return buf;  // data == nullptr
  }
  const size_t bucket = BucketSize(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (std::string why = LiveMemoryOverLimit(bucket, state_->in_use, limit); !why.empty()) {
      state_->last_error = what + why;
      return buf;
    }
    auto& list = state_->free_lists[bucket];
    if (!list.empty()) {
      p = list.back();
      list.pop_back();
      state_->cached -= bucket;
    } else {
      p = state_->DriverAlloc(bucket);
      if (!p && state_->cached) {  // give the cache back and try once more
        state_->ReleaseCacheLocked();
        p = state_->DriverAlloc(bucket);
      }
      if (!p) {
        size_t free_b = 0, total_b = 0;
        if (state_->kind == Kind::kDevice) cudaMemGetInfo(&free_b, &total_b);
        cudaGetLastError();
        state_->last_error =
            "out of " + std::string(state_->kind == Kind::kDevice ? "GPU" : "pinned host") +
            " memory: asked for " + std::to_string(bytes) + " bytes, " +
            (state_->kind == Kind::kDevice ? std::to_string(free_b) + " of " + std::to_string(total_b) +
                                                 " bytes free on the device, "
                                           : std::string()) +
            std::to_string(state_->in_use) + " bytes in use by Tandem";
        return buf;  // data == nullptr
      }
    }
    state_->in_use += bucket;
    state_->peak = std::max(state_->peak, state_->in_use);
  }
  buf->data = p;
  std::weak_ptr<State> weak = state_;
  buf->release = [weak, bucket](Buffer& b) {
    auto s = weak.lock();
    if (!s || !b.data) return;
    std::lock_guard<std::mutex> lock(s->mu);
    s->in_use -= bucket;
    s->free_lists[bucket].push_back(b.data);
    s->cached += bucket;
  };
  return buf;
}

size_t CudaAllocator::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->in_use;
}

size_t CudaAllocator::peak_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->peak;
}

size_t CudaAllocator::driver_allocations() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->driver_allocations;
}

std::string CudaAllocator::last_error() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->last_error;
}

void CudaAllocator::ReleaseCache() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->ReleaseCacheLocked();
}

}  // namespace tandem::cuda
