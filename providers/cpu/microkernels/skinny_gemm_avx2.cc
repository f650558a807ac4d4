// skinny_gemm.h's panel loops built with AVX2 + FMA (CMakeLists.txt sets the flags for
// this file). Nothing here runs unless the CPU reports both.
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#define SKINNY_ISA avx2
#define SKINNY_LANES 8
#include "providers/cpu/microkernels/skinny_gemm_impl.h"

namespace tandem::cpu::skinny {
extern const Kernels kAvx2Kernels = {"avx2", avx2::kPanel, avx2::PanelProduct};
}  // namespace tandem::cpu::skinny
#endif
