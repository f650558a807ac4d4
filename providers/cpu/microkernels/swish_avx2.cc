// swish.h's loop built with AVX2 + FMA (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define SWISH_ISA avx2
#define SWISH_LANES 8
#include "providers/cpu/microkernels/swish_impl.h"

namespace tandem::cpu::swish {
extern const Kernels kAvx2Kernels = {"avx2", avx2::Run, avx2::RunAddingColumns};
}  // namespace tandem::cpu::swish
#endif
