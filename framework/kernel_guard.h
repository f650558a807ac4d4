// The boundary between kernels and the runtime: a kernel's exceptions become statuses.
// Kernels allocate through KernelContext (which cannot return a status), so an allocation
// refused by the resource limits arrives as AllocationError; std::bad_alloc from scratch
// containers and any other exception are caught here too, so no model content can take
// the process down.
#pragma once
#include "absl/status/status.h"
#include "framework/kernel.h"

namespace tandem {

// kernel.Compute(ctx): AllocationError/std::bad_alloc -> RESOURCE_EXHAUSTED with its
// message, any other std::exception -> INTERNAL with its what(). The caller adds the node.
absl::Status ComputeCatching(Kernel& kernel, KernelContext& ctx);

}  // namespace tandem
