#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterIndexKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
