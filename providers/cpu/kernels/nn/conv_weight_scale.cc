#include "providers/cpu/kernels/nn/conv_weight_scale.h"

namespace tandem::cpu {

int OutputInnerBlock(const dnnl::memory::desc& packed, const dnnl::memory::dims& dims) {
  using tag = dnnl::memory::format_tag;
  if (dims.size() != 4 || packed.data_type() != dnnl::memory::data_type::f32) return 0;
  const std::pair<tag, int> layouts[] = {{tag::Acdb16a, 16}, {tag::Acdb32a, 32}, {tag::Acdb48a, 48}, {tag::Acdb64a, 64}};
  for (const auto& [t, b] : layouts)
    if (packed == dnnl::memory::desc(dims, dnnl::memory::data_type::f32, t)) return b;
  return 0;
}

void ScalePlainWeights(const float* w, const float* s, int64_t O, int64_t C, int64_t taps, float* out) {
  for (int64_t o = 0; o < O; ++o)
    for (int64_t c = 0; c < C; ++c) {
      const float g = s[c];
      const int64_t at = (o * C + c) * taps;
      for (int64_t t = 0; t < taps; ++t) out[at + t] = w[at + t] * g;
    }
}

void ScaleInnerBlockedWeights(const float* w, const float* s, int64_t o_blocks, int64_t C, int64_t taps, int B,
                              float* out) {
  int64_t at = 0;
  for (int64_t r = 0; r < o_blocks * taps; ++r)
    for (int64_t c = 0; c < C; ++c, at += B) {
      const float g = s[c];
      for (int i = 0; i < B; ++i) out[at + i] = w[at + i] * g;
    }
}

}  // namespace tandem::cpu
