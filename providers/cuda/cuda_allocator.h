// Memory for the CUDA provider.
//
// CudaAllocator: a caching device allocator. Sizes are rounded up to buckets (512 B
// steps below 1 MiB, 2 MiB steps above); a released buffer goes to its bucket's free
// list and the next request of that bucket takes it, so a steady state of repeated runs
// or training steps makes no cudaMalloc/cudaFree calls. When cudaMalloc fails the cache
// is returned to the driver and the request tried once more; if it still fails,
// Allocate returns a buffer with data == nullptr and last_error() says how much was
// asked and how much the device has free (kernels turn that into a status). The same
// null buffer, before any driver call, for a request over the memory limit
// (graph/resource_limits.h): device memory only when --max-memory was set (otherwise
// the device's own size is the limit), pinned host memory always (default 80% of RAM).
//
// Private pools, for CUDA Graphs (CudaProvider::BeginCapture): between OpenPool and
// ClosePool every block handed out belongs to the pool; a pool block that is freed goes
// back to the pool, not to the shared cache, and is reused only by requests made while
// that pool is open. So the memory a recorded graph reads and writes is never given to
// anyone else; the blocks return to the cache when the last handle of the pool is
// dropped (with the graph). Driver allocations made while a pool is open tell the driver
// they are not part of the recording (cudaMalloc would otherwise end it).
//
// PinnedAllocator: page-locked host memory (cudaMallocHost), cached the same way, for
// copies to and from the device at full bus speed.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "framework/allocator.h"

namespace tandem::cuda {

class CudaAllocator : public Allocator {
 public:
  enum class Kind { kDevice, kPinnedHost };
  CudaAllocator(Kind kind, int device_index);
  ~CudaAllocator() override;
  Device device() const override;
  std::shared_ptr<Buffer> Allocate(size_t bytes) override;
  size_t bytes_in_use() const override;
  size_t peak_bytes() const override;
  // Driver allocations made so far (stays flat in a steady state), and the last failure.
  size_t driver_allocations() const;
  std::string last_error() const;
  // Returns every cached (free) buffer to the driver.
  void ReleaseCache();
  // See "Private pools" above. One pool open at a time; the handle keeps the pool's blocks.
  std::shared_ptr<void> OpenPool();
  void ClosePool();

  static size_t BucketSize(size_t bytes);

 private:
  uint64_t Limit() const;  // 0: none
  struct State;
  struct Pool;
  std::shared_ptr<State> state_;  // outlives the allocator while buffers are alive
};

}  // namespace tandem::cuda
