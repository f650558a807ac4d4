// tanh_arrays.h's loops built with AVX2 + FMA (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX2 and FMA.
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#define TANDEM_FAST_TANH_NAMESPACE fast_tanh_avx2
#include "providers/cpu/microkernels/fast_tanh.h"
#include "providers/cpu/microkernels/tanh_arrays.h"

namespace tandem::cpu::tanh_arrays {
extern const Kernels kAvx2Kernels = {"avx2", fast_tanh_avx2::TanhInto, fast_tanh_avx2::GeluTanhInto};
}  // namespace tandem::cpu::tanh_arrays
#endif
