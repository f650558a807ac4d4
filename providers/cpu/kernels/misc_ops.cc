#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterMiscKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
