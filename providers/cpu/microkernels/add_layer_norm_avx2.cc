// add_layer_norm.h's rows built with AVX2 + FMA (CMakeLists.txt sets the flags for this
// file). Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define ADD_LN_ISA avx2
#define ADD_LN_LANES 8
#include "providers/cpu/microkernels/add_layer_norm_impl.h"

namespace tandem::cpu::add_layer_norm {
extern const Kernels kAvx2Kernels = {"avx2", avx2::Rows};
}  // namespace tandem::cpu::add_layer_norm
#endif
