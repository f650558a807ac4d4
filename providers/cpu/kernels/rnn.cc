#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterRnnKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
