#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterControlFlowKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
