// quantize_u8.h's loops built with AVX-512F + FMA (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define QUANTIZE_U8_ISA avx512
#include "providers/cpu/microkernels/quantize_u8_impl.h"

namespace tandem::cpu::quantize_u8 {
extern const Kernels kAvx512Kernels = {"avx512", avx512::Range, avx512::Quantize, avx512::AddU8};
}  // namespace tandem::cpu::quantize_u8
#endif
