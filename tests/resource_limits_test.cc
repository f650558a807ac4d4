// Resource limits (graph/resource_limits.h): size arithmetic that cannot overflow, the
// memory limit applied before allocating, and the CLI's size syntax.
#include "graph/resource_limits.h"

#include <gtest/gtest.h>

#include "framework/allocator.h"
#include "providers/cpu/cpu_allocator.h"
#include "tests/tagged_host_allocator.h"

namespace tandem {
namespace {

// Restores the process-wide limits when a test ends.
class LimitsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetResourceLimits(saved_); }
  void SetMaxMemory(uint64_t bytes) {
    ResourceLimits l = saved_;
    l.max_memory_bytes = bytes;
    SetResourceLimits(l);
  }
  ResourceLimits saved_ = GetResourceLimits();
};

TEST_F(LimitsTest, TensorBytesRejectsNegativeAndOverflowingDims) {
  EXPECT_EQ(*CheckedTensorBytes(DataType::kFloat, {2, 3}), 24u);
  EXPECT_EQ(*CheckedTensorBytes(DataType::kDouble, {}), 8u);
  EXPECT_EQ(*CheckedTensorBytes(DataType::kFloat, {0, int64_t{1} << 62}), 0u);
  auto negative = CheckedTensorBytes(DataType::kFloat, {4, -1});
  EXPECT_EQ(negative.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("negative dimension"), std::string::npos);
  // 2^32 * 2^32 wraps to 0 in uint64 arithmetic; 2^62 floats overflow once multiplied by 4.
  EXPECT_FALSE(CheckedTensorBytes(DataType::kFloat, {int64_t{1} << 32, int64_t{1} << 32}).ok());
  EXPECT_FALSE(CheckedTensorBytes(DataType::kFloat, {int64_t{1} << 62}).ok());
}

// The host limit is not a device's: a device allocator applies its own (the CUDA one: the
// device's size, or --max-memory when set), so a tensor over the host limit is asked of it.
TEST_F(LimitsTest, HostMemoryLimitIsNotAppliedToDeviceAllocators) {
  SetMaxMemory(1 << 20);
  testing::TaggedHostAllocator device(Device{DeviceType::kCuda, 0});
  Tensor t;
  EXPECT_NO_THROW(t = AllocateTensor(device, DataType::kFloat, {512, 1024}));  // 2 MiB
  EXPECT_EQ(t.bytes(), size_t{2} << 20);
  EXPECT_EQ(device.bytes_in_use(), size_t{2} << 20);
  // Dims that make no tensor are refused on every device.
  EXPECT_THROW(AllocateTensor(device, DataType::kFloat, {4, -1}), AllocationError);
  CpuAllocator host;
  try {
    AllocateTensor(host, DataType::kFloat, {512, 1024});
    ADD_FAILURE() << "2 MiB on the host under a 1 MiB limit";
  } catch (const AllocationError& e) {
    EXPECT_NE(std::string(e.what()).find("float[512,1024] needs 2.0 MiB"), std::string::npos) << e.what();
  }
}

TEST_F(LimitsTest, MemoryLimitAppliesBeforeAllocating) {
  SetMaxMemory(1 << 20);
  auto big = CheckedTensorBytes(DataType::kFloat, {512, 1024});  // 2 MiB
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(big.status().message().find("2.0 MiB, over the memory limit of 1.0 MiB"), std::string::npos)
      << big.status();
  EXPECT_THROW(Tensor::Host(DataType::kFloat, {512, 1024}), AllocationError);
  // The allocator counts live memory: two 768 KiB buffers do not fit under 1 MiB together.
  CpuAllocator alloc;
  auto first = alloc.Allocate(768 << 10);
  EXPECT_THROW(alloc.Allocate(768 << 10), AllocationError);
  first.reset();
  EXPECT_NO_THROW(alloc.Allocate(768 << 10));
  EXPECT_THROW(alloc.Allocate(~size_t{0}), AllocationError);
}

TEST_F(LimitsTest, DefaultMemoryLimitIsBelowPhysicalMemory) {
  SetMaxMemory(0);
  EXPECT_GT(MaxMemoryBytes(), uint64_t{256} << 20);
  EXPECT_THROW(Tensor::Host(DataType::kFloat, {int64_t{1} << 20, int64_t{1} << 20}), AllocationError);
}

TEST(ByteSizes, ParseAndFormat) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("512K"), 512u << 10);
  EXPECT_EQ(*ParseByteSize("64M"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("64MiB"), 64u << 20);
  EXPECT_EQ(*ParseByteSize("8gb"), uint64_t{8} << 30);
  EXPECT_EQ(*ParseByteSize("1.5G"), uint64_t{3} << 29);
  EXPECT_EQ(*ParseByteSize("2T"), uint64_t{2} << 40);
  for (const char* bad : {"", "lots", "0", "-1G", "1.5X", "G", "1e30", "nan"})
    EXPECT_FALSE(ParseByteSize(bad).ok()) << bad;
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(uint64_t{3} << 29), "1.5 GiB");
}

}  // namespace
}  // namespace tandem
