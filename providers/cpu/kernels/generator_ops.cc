#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterGeneratorKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
