// box_overlap.h's loop built with AVX2 (CMakeLists.txt sets the flags for this file).
// Nothing here runs unless the CPU reports AVX2.
#if defined(__x86_64__) && defined(__AVX2__)
#define NMS_ISA avx2
#include "providers/cpu/microkernels/box_overlap_impl.h"

namespace tandem::cpu::nms {
extern const Kernels kAvx2Kernels = {"avx2", avx2::OverlapsAny};
}  // namespace tandem::cpu::nms
#endif
