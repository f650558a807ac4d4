// The inner loop of NonMaxSuppression (kernels/tensor/non_max_suppression.cc): whether a
// candidate box overlaps any of the boxes kept so far by more than the IoU threshold. A
// detector's exported post-processing (torchvision's batched_nms: every class's boxes in
// one NMS, offset apart) keeps thousands of boxes and tests each of tens of thousands of
// candidates against all of them, so the test runs over the kept boxes' coordinates as
// arrays, a block of lanes at a time, in float as ONNX Runtime computes it. Built for the
// baseline x86-64 instruction set, AVX2 and AVX-512 (box_overlap_impl.h), chosen under
// ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::nms {

// Kept boxes, one array per coordinate (y1 <= y2, x1 <= x2) and their areas. A box of no
// area suppresses nothing: it is stored with y1 = +inf, y2 = -inf and area 0.
struct BoxArrays {
  const float* y1;
  const float* x1;
  const float* y2;
  const float* x2;
  const float* area;
};

struct Kernels {
  const char* isa;
  // Whether the box (y1, x1, y2, x2) of area > 0 has, with any of the n kept boxes,
  // intersection / union > iou_threshold (>= 0).
  bool (*overlaps_any)(const BoxArrays& kept, int64_t n, float y1, float x1, float y2, float x2, float area,
                       float iou_threshold);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

}  // namespace tandem::cpu::nms
