// Swish (SiLU for alpha = 1) in place: x * sigmoid(alpha x) = x / (1 + exp(-alpha x)), the
// activation of EfficientNet's, MobileNet-style and YOLO convolutions. oneDNN 2.6's swish
// post-op costs ~0.4 ns a value on two AVX-512 cores, more than the 1x1 convolution it
// follows (16 -> 96 channels on 112x112: 0.24 ms bare, 0.69 ms with it); this pass, over
// the convolution's output just written, takes about half of that. sigmoid comes from
// exp(-|alpha x|) (lane_vector.h's, within 2 ulp of float64; it never overflows) and a
// division by 1 + exp through the reciprocal estimate and Newton steps (DivideByOneToTwo: a
// 512-bit division alone cost a third of the pass): within a few ulp of float64
// x * sigmoid(alpha x) down to where it underflows to 0 (alpha x below -87.3); NaN stays NaN,
// +inf stays +inf, -inf gives NaN (-inf * 0). A squeeze-and-excitation pool of the result
// (EfficientNet's) is taken on the way: SwishInPlaceWithMeans.
// Built for the baseline x86-64 instruction set, AVX2 and AVX-512 (swish_impl.h), chosen
// under ONEDNN_MAX_CPU_ISA like the rest of the provider (cpu_isa.h).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::swish {

struct Kernels {
  const char* isa;
  void (*run)(float* p, int64_t n, float alpha);  // in place over p[0, n)
  // In place over rows x B values, each result also added to its column's sums[0, B).
  void (*run_adding_columns)(float* p, int64_t rows, int64_t B, float alpha, float* sums);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

// In place over p[0, n) with the widest build, split across the OpenMP team in blocks
// (kernel_util.h ParallelBlocks).
void SwishInPlace(float* p, int64_t n, float alpha);

// In place over the channel-blocked map p [outer, S, B] (channel_reduction.h's layouts; B = 1
// for a plain one), writing the results' means over the S pixels to means [outer, B]: the
// GlobalAveragePool of the output in the same pass, while each value is in a register.
void SwishInPlaceWithMeans(float* p, int64_t outer, int64_t S, int64_t B, float alpha, float* means, int threads);

}  // namespace tandem::cpu::swish
