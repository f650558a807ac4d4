#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterConvKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
