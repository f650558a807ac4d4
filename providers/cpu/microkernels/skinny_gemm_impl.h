// The panel loops of skinny_gemm.h, compiled once per instruction set: the including file
// defines SKINNY_ISA (the namespace) and SKINNY_LANES (floats per vector register) and is
// built with the matching compiler flags. GCC's vector extension types map onto that
// ISA's registers; a panel is 4 vectors wide, so m rows hold 4m accumulators.
#include <cstdint>
#include <cstring>

#include "providers/cpu/microkernels/skinny_gemm_kernels.h"

namespace tandem::cpu::skinny::SKINNY_ISA {

constexpr int kLanes = SKINNY_LANES;
constexpr int kVectors = 4;
constexpr int kPanel = kLanes * kVectors;
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float)), may_alias));

template <int M>
void PanelRows(const float* a, int64_t lda, const float* packed, int64_t k, float* acc_out) {
  Vec acc[M][kVectors] = {};
  for (int64_t kk = 0; kk < k; ++kk) {
    const Vec* b = reinterpret_cast<const Vec*>(packed + kk * kPanel);  // aligned (PackedWeights)
    for (int i = 0; i < M; ++i) {
      const Vec av = a[i * lda + kk] - Vec{};  // a broadcast (x - 0 folds away; x + 0 would not: -0)
      for (int v = 0; v < kVectors; ++v) acc[i][v] += av * b[v];
    }
  }
  std::memcpy(acc_out, acc, sizeof acc);
}

inline void PanelProduct(const float* a, int64_t lda, int m, const float* packed, int64_t k, float* acc) {
  switch (m) {
    case 1: return PanelRows<1>(a, lda, packed, k, acc);
    case 2: return PanelRows<2>(a, lda, packed, k, acc);
    case 3: return PanelRows<3>(a, lda, packed, k, acc);
    default: return PanelRows<4>(a, lda, packed, k, acc);
  }
}

}  // namespace tandem::cpu::skinny::SKINNY_ISA
