// box_overlap.h's loop, compiled once per instruction set: the including file defines
// NMS_ISA (the namespace) and is built with the matching compiler flags; the compiler
// vectorizes the block loop to that set's lanes.
#include <algorithm>
#include <cstdint>

#include "providers/cpu/microkernels/box_overlap.h"

namespace tandem::cpu::nms::NMS_ISA {

// Blocks of 64 kept boxes: the loop over one has no exit (it vectorizes), the check
// between blocks stops at the first overlap.
constexpr int64_t kBlock = 64;

bool OverlapsAny(const BoxArrays& kept, int64_t n, float y1, float x1, float y2, float x2, float area,
                 float iou_threshold) {
  for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const int64_t k1 = std::min(n, k0 + kBlock);
    int hits = 0;
    for (int64_t k = k0; k < k1; ++k) {
      const float ih = std::min(y2, kept.y2[k]) - std::max(y1, kept.y1[k]);
      const float iw = std::min(x2, kept.x2[k]) - std::max(x1, kept.x1[k]);
      const float inter = std::max(ih, 0.f) * std::max(iw, 0.f);
      // union >= area > 0: the candidate's own area bounds it from below
      hits += inter / (area + kept.area[k] - inter) > iou_threshold;
    }
    if (hits) return true;
  }
  return false;
}

}  // namespace tandem::cpu::nms::NMS_ISA
