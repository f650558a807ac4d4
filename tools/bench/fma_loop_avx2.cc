// Built with -mavx2 -mfma (cmake/library.cmake).
#include <immintrin.h>

#include "tools/bench/fma_loop_chains.h"

namespace tandem::bench {

namespace {
struct Ymm {
  using V = __m256;
  static constexpr int kChains = kFmaChains256;
  static V Set(float x) { return _mm256_set1_ps(x); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static float First(V a) { return _mm256_cvtss_f32(a); }
};
}  // namespace

float FmaChains256(long iterations) { return FmaChains<Ymm>(iterations); }

}  // namespace tandem::bench
