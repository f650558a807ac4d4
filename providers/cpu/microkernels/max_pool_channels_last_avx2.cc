// max_pool_channels_last.h's per-pixel loop built with AVX2 (CMakeLists.txt sets the flags
// for this file). Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define POOL_ISA avx2
#define POOL_LANES 8
#include "providers/cpu/microkernels/max_pool_channels_last_impl.h"

namespace tandem::cpu::pool_cl {
extern const Kernels kAvx2Kernels = {"avx2", avx2::Pixel};
}  // namespace tandem::cpu::pool_cl
#endif
