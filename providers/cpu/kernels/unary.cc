#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterUnaryKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
