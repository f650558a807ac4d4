// DynamicQuantizeLinear's two passes over float32 (quantize_linear_ops.cc): the range of the
// values and their uint8 quantization, y = saturate(round_half_even(x / scale) + zero_point),
// and QLinearAdd's sum of two dequantized uint8 tensors quantized the same way,
// built for the baseline x86-64 instruction set, AVX2 and AVX-512 (quantize_u8_*.cc), the
// widest the CPU runs chosen under ONEDNN_MAX_CPU_ISA like the rest of the provider
// (cpu_isa.h). The division stays a division (x * (1 / scale) can round differently), so
// the vector width is what makes it fast: BERT-base's 48 quantizations a run took 9.7 ms at
// the SSE2 baseline. Every build gives the same bytes (no FMA is involved).
#pragma once
#include <cstdint>

#include "providers/cpu/microkernels/isa_dispatch.h"

namespace tandem::cpu::quantize_u8 {

// QLinearAdd's parameters (kernels/quantization/qlinear_add.cc).
struct AddParams {
  float a_scale, a_zero, b_scale, b_zero, c_scale, c_zero;
};

struct Kernels {
  const char* isa;
  // min(0, x...) and max(0, x...) over x[0, n) into *lo and *hi (a NaN is passed over).
  void (*range)(const float* x, int64_t n, float* lo, float* hi);
  // y[i] = saturate(round_half_even(x[i] / scale) + zero_point) to [0, 255], NaN to 0, for a
  // zero point in [0, 255] (beyond 2^22 the rounding is inexact, but such values saturate).
  void (*quantize)(const float* x, int64_t n, float scale, float zero_point, uint8_t* y);
  // y[i] = quantize((a[i] - a_zero) * a_scale + (b[i] - b_zero) * b_scale) with c's scale and zero
  // point, each product and the sum rounded to float32 (no FMA).
  void (*add)(const uint8_t* a, const uint8_t* b, int64_t n, const AddParams& p, uint8_t* y);
};

// The builds this process may run (baseline first) and the widest of them.
const IsaBuilds<Kernels>& Builds();

// DequantizeLinear's per-tensor float32 result for 8-bit x, y[i] = (x[i] - zero_point) * scale
// (x - zero_point is exact in float), on the calling thread. Baseline code for the kernels'
// own files: the per-ISA builds keep their loops in their namespaces (one inline copy would
// serve every build).
template <typename T>
inline void DequantizeFrom8Bit(const T* x, int64_t n, float zero_point, float scale, float* y) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zero_point) * scale;
}

// QuantizeLinear's per-tensor 8-bit result on the widest build, on the calling thread:
// uint8 as `quantize` writes it, or int8 (zero point in [-128, 127]) as the uint8 result for
// the zero point + 128, less 128 (the same saturation and rounding).
void QuantizeTo8Bit(const float* x, int64_t n, float scale, float zero_point, bool to_int8, uint8_t* y);

}  // namespace tandem::cpu::quantize_u8
