// DynamicQuantizeLinear's two passes over float32 (quantize_linear_ops.cc): the range of the
// values and their uint8 quantization, y = saturate(round_half_even(x / scale) + zero_point),
// built for the baseline x86-64 instruction set, AVX2 and AVX-512 (quantize_u8_*.cc), the
// widest the CPU runs chosen under ONEDNN_MAX_CPU_ISA like the rest of the provider
// (cpu_isa.h). The division stays a division (x * (1 / scale) can round differently), so
// the vector width is what makes it fast: BERT-base's 48 quantizations a run took 9.7 ms at
// the SSE2 baseline. Every build gives the same bytes (no FMA is involved).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::quantize_u8 {

struct Kernels {
  const char* isa;
  // min(0, x...) and max(0, x...) over x[0, n) into *lo and *hi (a NaN is passed over).
  void (*range)(const float* x, int64_t n, float* lo, float* hi);
  // y[i] = saturate(round_half_even(x[i] / scale) + zero_point) to [0, 255], NaN to 0;
  // requires scale != 0 and |x / scale| <= 2^22.
  void (*quantize)(const float* x, int64_t n, float scale, float zero_point, uint8_t* y);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

}  // namespace tandem::cpu::quantize_u8
