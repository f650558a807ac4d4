#include "framework/kernel_guard.h"

#include <exception>
#include <new>
#include <string>

#include "graph/resource_limits.h"

namespace tandem {

absl::Status ComputeCatching(Kernel& kernel, KernelContext& ctx) {
  try {
    return kernel.Compute(ctx);
  } catch (const std::bad_alloc& e) {
    return absl::ResourceExhaustedError(AllocationFailureMessage(e));
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("unexpected exception: ") + e.what());
  }
}

}  // namespace tandem
