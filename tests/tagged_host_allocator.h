// Host memory tagged as another device: lets tests stand in for a GPU provider (kernels of
// the CPU's, data in ordinary memory) and check what the runtime copies across the edge.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "framework/allocator.h"

namespace tandem::testing {

class TaggedHostAllocator : public Allocator {
 public:
  explicit TaggedHostAllocator(Device device) : device_(device) {}
  Device device() const override { return device_; }
  std::shared_ptr<Buffer> Allocate(size_t bytes) override {
    auto b = std::make_shared<Buffer>();
    b->data = std::malloc(bytes ? bytes : 1);
    b->bytes = bytes;
    b->device = device_;
    b->release = [](Buffer& buf) { std::free(buf.data); };
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
    return b;
  }
  size_t bytes_in_use() const override { return in_use_; }
  size_t peak_bytes() const override { return peak_; }

 private:
  Device device_;
  size_t in_use_ = 0, peak_ = 0;
};

}  // namespace tandem::testing
