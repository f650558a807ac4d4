#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterLayoutKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
