#include "runtime/kernel_guard.h"

#include <exception>
#include <new>
#include <string>

namespace tandem {

absl::Status ComputeCatching(Kernel& kernel, KernelContext& ctx) {
  try {
    return kernel.Compute(ctx);
  } catch (const std::bad_alloc& e) {  // AllocationError says what and why
    const std::string what = e.what();
    return absl::ResourceExhaustedError(what == "std::bad_alloc" ? "out of memory" : what);
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("unexpected exception: ") + e.what());
  }
}

}  // namespace tandem
