// row_sums.h's loops built with AVX2 (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define ROW_SUMS_ISA avx2
#include "providers/cpu/microkernels/row_sums_impl.h"

namespace tandem::cpu::row_sums {
extern const Kernels kAvx2Kernels = {"avx2", avx2::SumRows, avx2::SumColumns};
}  // namespace tandem::cpu::row_sums
#endif
