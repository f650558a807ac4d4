#include "providers/cpu/microkernels/quantize_u8.h"

#define QUANTIZE_U8_ISA baseline
#include "providers/cpu/microkernels/quantize_u8_impl.h"

namespace tandem::cpu::quantize_u8 {

extern const Kernels kAvx2Kernels, kAvx512Kernels;  // quantize_u8_avx2.cc, quantize_u8_avx512.cc
const Kernels kBaselineKernels = {"baseline", baseline::Range, baseline::Quantize};

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

}  // namespace tandem::cpu::quantize_u8
