// The CUDA allocator's memory limit (graph/resource_limits.h): requests over --max-memory
// are refused before any driver call, so this runs with or without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "graph/resource_limits.h"
#include "providers/cuda/cuda_allocator.h"

namespace tandem::cuda {
namespace {

class LimitGuard {  // restores the process-wide limits after each test
 public:
  explicit LimitGuard(uint64_t max_memory) : saved_(GetResourceLimits()) {
    ResourceLimits l = saved_;
    l.max_memory_bytes = max_memory;
    SetResourceLimits(l);
  }
  ~LimitGuard() { SetResourceLimits(saved_); }

 private:
  ResourceLimits saved_;
};

TEST(CudaAllocatorLimits, DeviceRequestOverMaxMemoryIsRefusedWithTheLimitNamed) {
  LimitGuard limit(1 << 20);
  CudaAllocator alloc(CudaAllocator::Kind::kDevice, 0);
  auto buf = alloc.Allocate(3 << 20);
  EXPECT_EQ(buf->data, nullptr);
  EXPECT_EQ(alloc.bytes_in_use(), 0u);
  EXPECT_EQ(alloc.driver_allocations(), 0u);
  EXPECT_EQ(alloc.last_error(),
            "GPU memory: a buffer of 3.0 MiB is over the memory limit of 1.0 MiB (--max-memory)");
}

TEST(CudaAllocatorLimits, RoundingToABucketCountsAgainstTheLimit) {
  // 1 MiB + 1 byte rounds up to a 2 MiB bucket, over a 1.5 MiB limit.
  LimitGuard limit(3 << 19);
  CudaAllocator alloc(CudaAllocator::Kind::kDevice, 0);
  auto buf = alloc.Allocate((1 << 20) + 1);
  EXPECT_EQ(buf->data, nullptr);
  EXPECT_NE(alloc.last_error().find("GPU memory: allocating 2.0 MiB would raise live tensor memory to 2.0 MiB"), std::string::npos)
      << alloc.last_error();
}

TEST(CudaAllocatorLimits, HugeRequestsNeverOverflowTheBucketArithmetic) {
  LimitGuard limit(1 << 30);
  for (auto kind : {CudaAllocator::Kind::kDevice, CudaAllocator::Kind::kPinnedHost}) {
    CudaAllocator alloc(kind, 0);
    auto buf = alloc.Allocate(std::numeric_limits<size_t>::max() - 1);
    EXPECT_EQ(buf->data, nullptr);
    EXPECT_NE(alloc.last_error().find("over the memory limit of 1.0 GiB"), std::string::npos)
        << alloc.last_error();
  }
}

TEST(CudaAllocatorLimits, PinnedHostMemoryHasTheDefaultLimitWhenNoneIsSet) {
  LimitGuard limit(0);  // default: a share of physical memory
  CudaAllocator alloc(CudaAllocator::Kind::kPinnedHost, 0);
  auto buf = alloc.Allocate(MaxMemoryBytes() + 1);
  EXPECT_EQ(buf->data, nullptr);
  EXPECT_NE(alloc.last_error().find("(--max-memory)"), std::string::npos) << alloc.last_error();
}

}  // namespace
}  // namespace tandem::cuda
