// skinny_gemm.h's panel loops built with AVX-512F + FMA (CMakeLists.txt sets the flags
// for this file). Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define SKINNY_ISA avx512
#define SKINNY_LANES 16
#include "providers/cpu/microkernels/skinny_gemm_impl.h"

namespace tandem::cpu::skinny {
extern const Kernels kAvx512Kernels = {"avx512", avx512::kPanel, avx512::PanelProduct};
}  // namespace tandem::cpu::skinny
#endif
