#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterPoolKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
