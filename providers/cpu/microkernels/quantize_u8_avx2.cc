// quantize_u8.h's loops built with AVX2 + FMA (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX2 and FMA.
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#define QUANTIZE_U8_ISA avx2
#include "providers/cpu/microkernels/quantize_u8_impl.h"

namespace tandem::cpu::quantize_u8 {
extern const Kernels kAvx2Kernels = {"avx2", avx2::Range, avx2::Quantize, avx2::AddU8};
}  // namespace tandem::cpu::quantize_u8
#endif
