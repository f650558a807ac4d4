#include "providers/cpu/microkernels/tanh_arrays.h"

#include "providers/cpu/microkernels/fast_tanh.h"

namespace tandem::cpu::tanh_arrays {

extern const Kernels kAvx2Kernels, kAvx512Kernels;  // tanh_arrays_avx2.cc, tanh_arrays_avx512.cc
const Kernels kBaselineKernels = {"baseline", TanhInto, GeluTanhInto};

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

void Tanh(const float* x, float* y, int64_t n) { Builds().best().tanh(x, y, n); }
void GeluTanh(const float* x, float* y, int64_t n) { Builds().best().gelu_tanh(x, y, n); }

}  // namespace tandem::cpu::tanh_arrays
