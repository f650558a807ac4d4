#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {

void RegisterVariadicKernels(KernelRegistry& r) { (void)r; }

}  // namespace tandem::cpu
