// swish.h's loop built with AVX-512F + FMA (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define SWISH_ISA avx512
#define SWISH_LANES 16
#include "providers/cpu/microkernels/swish_impl.h"

namespace tandem::cpu::swish {
extern const Kernels kAvx512Kernels = {"avx512", avx512::Run, avx512::RunAddingColumns};
}  // namespace tandem::cpu::swish
#endif
