// max_pool_channels_last.h's per-pixel loop built with AVX-512F (CMakeLists.txt sets the
// flags for this file). Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define POOL_ISA avx512
#define POOL_LANES 16
#include "providers/cpu/microkernels/max_pool_channels_last_impl.h"

namespace tandem::cpu::pool_cl {
extern const Kernels kAvx512Kernels = {"avx512", avx512::Pixel};
}  // namespace tandem::cpu::pool_cl
#endif
