// box_overlap.h's loop built with AVX-512F (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX-512F.
#if defined(__x86_64__) && defined(__AVX512F__)
#define NMS_ISA avx512
#include "providers/cpu/microkernels/box_overlap_impl.h"

namespace tandem::cpu::nms {
extern const Kernels kAvx512Kernels = {"avx512", avx512::OverlapsAny};
}  // namespace tandem::cpu::nms
#endif
