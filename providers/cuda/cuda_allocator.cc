#include "providers/cuda/cuda_allocator.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "graph/resource_limits.h"

namespace tandem::cuda {

struct CudaAllocator::Pool {
  std::weak_ptr<State> state;
  std::map<size_t, std::vector<void*>> free_lists;  // freed pool blocks, by bucket
  ~Pool();
};

struct CudaAllocator::State {
  Kind kind;
  int device_index;
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free_lists;  // bucket size -> cached pointers
  size_t in_use = 0, peak = 0, cached = 0, driver_allocations = 0;
  std::string last_error;
  std::shared_ptr<Pool> open_pool;  // OpenPool..ClosePool

  void* DriverAlloc(size_t bytes) {
    void* p = nullptr;
    cudaSetDevice(device_index);
    // Not part of any stream capture under way on this thread (a recording replays its
    // launches, never this allocation: the block stays the pool's).
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaError_t e = kind == Kind::kDevice ? cudaMalloc(&p, bytes) : cudaMallocHost(&p, bytes);
    cudaThreadExchangeStreamCaptureMode(&mode);
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

CudaAllocator::Pool::~Pool() {
  std::shared_ptr<State> s = state.lock();
  if (!s) return;  // the allocator and its cache are gone: nothing to give back to
  std::lock_guard<std::mutex> lock(s->mu);
  for (auto& [bucket, list] : free_lists) {
    auto& to = s->free_lists[bucket];
    to.insert(to.end(), list.begin(), list.end());
    s->cached += bucket * list.size();
  }
}

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
  std::shared_ptr<Pool> pool;  // the open pool, which then owns the block
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    pool = state_->open_pool;
    if (std::string why = LiveMemoryOverLimit(bucket, state_->in_use, limit); !why.empty()) {
      state_->last_error = what + why;
      return buf;
    }
    auto& list = state_->free_lists[bucket];
    if (pool && !pool->free_lists[bucket].empty()) {
      p = pool->free_lists[bucket].back();
      pool->free_lists[bucket].pop_back();
    } else if (!list.empty()) {
      p = list.back();
      list.pop_back();
      state_->cached -= bucket;
    } else {
      p = state_->DriverAlloc(bucket);
      if (!p && state_->cached && !pool) {  // give the cache back and try once more (not while recording)
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
  std::weak_ptr<Pool> weak_pool = pool;
  buf->release = [weak, weak_pool, bucket](Buffer& b) {
    auto s = weak.lock();
    if (!s || !b.data) return;
    std::shared_ptr<Pool> owner = weak_pool.lock();  // dropped after the lock below (~Pool locks too)
    std::lock_guard<std::mutex> lock(s->mu);
    s->in_use -= bucket;
    if (owner) {
      owner->free_lists[bucket].push_back(b.data);
      return;
    }
    s->free_lists[bucket].push_back(b.data);
    s->cached += bucket;
  };
  return buf;
}

std::shared_ptr<void> CudaAllocator::OpenPool() {
  auto pool = std::make_shared<Pool>();
  pool->state = state_;
  std::shared_ptr<Pool> previous;  // dropped after the lock (~Pool locks too)
  std::lock_guard<std::mutex> lock(state_->mu);
  previous = std::move(state_->open_pool);
  state_->open_pool = pool;
  return pool;
}

void CudaAllocator::ClosePool() {
  std::shared_ptr<Pool> closed;  // dropped after the lock (~Pool locks too)
  std::lock_guard<std::mutex> lock(state_->mu);
  closed = std::move(state_->open_pool);
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
