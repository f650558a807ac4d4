// Host allocator with a size-bucketed free list: a buffer released by a dead value is
// handed to the next allocation of the same bucket instead of going back to malloc.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "framework/allocator.h"

namespace tandem {

class CpuAllocator : public Allocator {
 public:
  CpuAllocator();
  CpuAllocator(const CpuAllocator&) = delete;
  CpuAllocator& operator=(const CpuAllocator&) = delete;
  ~CpuAllocator() override;
  Device device() const override { return Device{DeviceType::kCpu, 0}; }
  std::shared_ptr<Buffer> Allocate(size_t bytes) override;
  size_t bytes_in_use() const override;
  size_t peak_bytes() const override;
  // Number of allocations served from the pool (for tests and `tandem run` stats).
  size_t reused() const;

 private:
  struct State;
  State* state_;  // outlives the allocator while buffers are alive (deleted by the last)
};

}  // namespace tandem
