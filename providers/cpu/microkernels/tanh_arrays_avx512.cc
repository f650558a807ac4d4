// tanh_arrays.h's loops built with AVX-512F + FMA (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define TANDEM_FAST_TANH_NAMESPACE fast_tanh_avx512
#include "providers/cpu/microkernels/fast_tanh.h"
#include "providers/cpu/microkernels/tanh_arrays.h"

namespace tandem::cpu::tanh_arrays {
extern const Kernels kAvx512Kernels = {"avx512", fast_tanh_avx512::TanhInto, fast_tanh_avx512::GeluTanhInto};
}  // namespace tandem::cpu::tanh_arrays
#endif
