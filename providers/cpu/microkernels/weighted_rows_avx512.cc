// weighted_rows.h's loop built with AVX-512F (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define WEIGHTED_ROWS_ISA avx512
#define WEIGHTED_ROWS_LANES 16
#include "providers/cpu/microkernels/weighted_rows_impl.h"

namespace tandem::cpu::weighted_rows {
extern const Kernels kAvx512Kernels = {"avx512", avx512::Sum};
}  // namespace tandem::cpu::weighted_rows
#endif
