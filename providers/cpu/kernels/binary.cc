#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterBinaryKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
