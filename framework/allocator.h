// Allocator: hands out device buffers. Implementations pool freed buffers so memory is
// reused as values die (the runtime drops a value's tensor after its last use).
#pragma once
#include <memory>

#include "graph/tensor.h"

namespace tandem {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Device device() const = 0;
  // A buffer of at least `bytes` bytes; contents are unspecified. The CPU allocator throws
  // AllocationError when the memory is not there or would take it past MaxMemoryBytes();
  // the CUDA plugin's returns a buffer with null data and records why (cuda_allocator.h).
  virtual std::shared_ptr<Buffer> Allocate(size_t bytes) = 0;
  // Bytes currently handed out and the peak since construction.
  virtual size_t bytes_in_use() const = 0;
  virtual size_t peak_bytes() const = 0;
};

// Allocates a tensor of `dtype`/`dims` from `alloc` (strings always live on the host).
// Throws AllocationError (graph/resource_limits.h) for negative or overflowing dims and,
// for a host allocator, sizes over the memory limit, before asking the allocator; a
// device's allocator applies its own limit.
Tensor AllocateTensor(Allocator& alloc, DataType dtype, Dims dims);

}  // namespace tandem
