#include "framework/allocator.h"

#include "graph/resource_limits.h"

namespace tandem {

Tensor AllocateTensor(Allocator& alloc, DataType dtype, Dims dims) {
  if (dtype == DataType::kString) return Tensor::Host(dtype, std::move(dims));
  // Host memory is held to the memory limit here, where the message can name the type and
  // dims; a device's allocator applies its own limit (the device's size, or --max-memory).
  const size_t bytes = TensorBytesOrThrow(dtype, dims, alloc.device().type == DeviceType::kCpu);
  return Tensor(dtype, std::move(dims), alloc.Allocate(bytes));
}

}  // namespace tandem
