// Built with -mavx512f -mfma (cmake/library.cmake).
#include <immintrin.h>

#include "tools/bench/fma_loop_chains.h"

namespace tandem::bench {

namespace {
struct Zmm {
  using V = __m512;
  static constexpr int kChains = kFmaChains512;
  static V Set(float x) { return _mm512_set1_ps(x); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static float First(V a) { return _mm512_cvtss_f32(a); }
};
}  // namespace

float FmaChains512(long iterations) { return FmaChains<Zmm>(iterations); }

}  // namespace tandem::bench
