// row_sums.h's loops built with AVX-512F (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define ROW_SUMS_ISA avx512
#include "providers/cpu/microkernels/row_sums_impl.h"

namespace tandem::cpu::row_sums {
extern const Kernels kAvx512Kernels = {"avx512", avx512::SumRows, avx512::SumColumns};
}  // namespace tandem::cpu::row_sums
#endif
