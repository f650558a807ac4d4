// softmax_rows.h's row loops built with AVX2 + FMA (CMakeLists.txt sets the flags for this
// file). Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define SOFTMAX_ISA avx2
#define SOFTMAX_LANES 8
#include "providers/cpu/microkernels/softmax_rows_impl.h"

namespace tandem::cpu::softmax_rows {
extern const Kernels kAvx2Kernels = {"avx2", avx2::ExpRows, avx2::ColumnSoftmax};
}  // namespace tandem::cpu::softmax_rows
#endif
