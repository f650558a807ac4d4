#include "providers/allocator.h"

#include "graph/resource_limits.h"

namespace tandem {

Tensor AllocateTensor(Allocator& alloc, DataType dtype, Dims dims) {
  if (dtype == DataType::kString) return Tensor::Host(dtype, std::move(dims));
  const size_t bytes = TensorBytesOrThrow(dtype, dims);
  return Tensor(dtype, std::move(dims), alloc.Allocate(bytes));
}

}  // namespace tandem
