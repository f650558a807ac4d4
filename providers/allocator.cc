#include "providers/allocator.h"

namespace tandem {

Tensor AllocateTensor(Allocator& alloc, DataType dtype, Dims dims) {
  if (dtype == DataType::kString) return Tensor::Host(dtype, std::move(dims));
  size_t bytes = static_cast<size_t>(NumElements(dims)) * SizeOf(dtype);
  return Tensor(dtype, std::move(dims), alloc.Allocate(bytes));
}

}  // namespace tandem
