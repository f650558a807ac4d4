// box_overlap.h's loop built for the baseline x86-64 instruction set (SSE2: 4 lanes).
#define NMS_ISA baseline
#include "providers/cpu/microkernels/box_overlap_impl.h"

namespace tandem::cpu::nms {
extern const Kernels kBaselineKernels = {"baseline", baseline::OverlapsAny};
}  // namespace tandem::cpu::nms
