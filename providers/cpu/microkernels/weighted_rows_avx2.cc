// weighted_rows.h's loop built with AVX2 (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define WEIGHTED_ROWS_ISA avx2
#define WEIGHTED_ROWS_LANES 8
#include "providers/cpu/microkernels/weighted_rows_impl.h"

namespace tandem::cpu::weighted_rows {
extern const Kernels kAvx2Kernels = {"avx2", avx2::Sum};
}  // namespace tandem::cpu::weighted_rows
#endif
