// softmax_rows.h's row loops built with AVX-512F + FMA (CMakeLists.txt sets the flags for
// this file). Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define SOFTMAX_ISA avx512
#define SOFTMAX_LANES 16
#include "providers/cpu/microkernels/softmax_rows_impl.h"

namespace tandem::cpu::softmax_rows {
extern const Kernels kAvx512Kernels = {"avx512", avx512::ExpRows, avx512::ColumnSoftmax};
}  // namespace tandem::cpu::softmax_rows
#endif
