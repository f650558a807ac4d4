// add_layer_norm.h's rows built with AVX-512F + FMA (CMakeLists.txt sets the flags for
// this file). Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define ADD_LN_ISA avx512
#define ADD_LN_LANES 16
#include "providers/cpu/microkernels/add_layer_norm_impl.h"

namespace tandem::cpu::add_layer_norm {
extern const Kernels kAvx512Kernels = {"avx512", avx512::Rows};
}  // namespace tandem::cpu::add_layer_norm
#endif
