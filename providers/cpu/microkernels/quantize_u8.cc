#include "providers/cpu/microkernels/quantize_u8.h"

#define QUANTIZE_U8_ISA baseline
#include "providers/cpu/microkernels/quantize_u8_impl.h"

namespace tandem::cpu::quantize_u8 {

extern const Kernels kAvx2Kernels, kAvx512Kernels;  // quantize_u8_avx2.cc, quantize_u8_avx512.cc
const Kernels kBaselineKernels = {"baseline", baseline::Range, baseline::Quantize, baseline::AddU8};

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

void QuantizeTo8Bit(const float* x, int64_t n, float scale, float zero_point, bool to_int8, uint8_t* y) {
  Builds().best().quantize(x, n, scale, zero_point + (to_int8 ? 128.f : 0.f), y);
  if (to_int8)
    for (int64_t i = 0; i < n; ++i) y[i] ^= 0x80;  // v as uint8 -> v - 128 as int8
}

}  // namespace tandem::cpu::quantize_u8
