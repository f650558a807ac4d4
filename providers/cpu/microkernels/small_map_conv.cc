#include "providers/cpu/microkernels/small_map_conv.h"

#include <algorithm>
#include <atomic>
#include <new>

#include <omp.h>

#include "providers/cpu/microkernels/isa_dispatch.h"
#include "providers/cpu/microkernels/small_map_conv_tiles.h"
#include "providers/cpu/packed_weights.h"

namespace tandem::cpu::small_map {

namespace {
constexpr int64_t kTaps = 9;
std::atomic<int64_t> convs_run{0};
}  // namespace

bool Available() {
#ifdef TANDEM_AVX512_BUILD
  return Avx512Allowed();
#else
  return false;
#endif
}

bool Suits(const Shape& s, int threads) {
  if (!Available() || threads < 1 || s.n < 1 || s.c < 1 || (s.stride != 1 && s.stride != 2)) return false;
  if (s.h < 2 || s.w < 2 || s.oh() * s.ow() > kMaxPixels || s.m % kPanel != 0) return false;
  const int64_t panels = s.m / kPanel;
  return panels % threads == 0 && kTaps * s.c * s.m * int64_t{sizeof(float)} >= (int64_t{1} << 21);
}

PackedWeights::PackedWeights(const float* w, int64_t m, int64_t c) {
  data_ = MakeHostBuffer(static_cast<size_t>(m * c * kTaps) * sizeof(float));  // cache-line aligned
  if (!data_) throw std::bad_alloc();
  float* out = static_cast<float*>(data_.get());
  for (int64_t p = 0; p < m / kPanel; ++p)
    for (int64_t t = 0; t < kTaps; ++t)
      for (int64_t ic = 0; ic < c; ++ic)
        for (int64_t j = 0; j < kPanel; ++j) *out++ = w[((p * kPanel + j) * c + ic) * kTaps + t];
}

const PackedWeights& LazyPackedWeights::Get(const Tensor& w, int64_t m, int64_t c) {
  struct Form {
    int64_t m, c;
    bool operator==(const Form& o) const { return m == o.m && c == o.c; }
  };
  static ConstantCopies<Form, PackedWeights> copies;
  return copy_.Get([&] {
    return copies.Get(w, Form{m, c}, [&] { return std::make_unique<const PackedWeights>(w.data<float>(), m, c); });
  });
}

int64_t ConvsRun() { return convs_run.load(std::memory_order_relaxed); }

void Run(const Shape& s, const float* x, const PackedWeights& w, const float* bias, const FusedActivation& act,
         bool sum, const FusedActivation& sum_act, float* y, int threads) {
#ifdef TANDEM_AVX512_BUILD
  convs_run.fetch_add(1, std::memory_order_relaxed);
  const int64_t panels = s.m / kPanel, pixels = s.oh() * s.ow(), panel_floats = kTaps * s.c * kPanel;
  // A thread's panels, each through every image: the panel stays in L2 across the images.
  auto share = [&](int64_t lo, int64_t hi) {
    alignas(64) float acc[kMaxPixels * kPanel];
    const float* end = w.data() + hi * panel_floats;
    for (int64_t p = lo; p < hi; ++p)
      for (int64_t img = 0; img < s.n; ++img) {
        for (int64_t i = 0; i < pixels; ++i)
          for (int64_t j = 0; j < kPanel; ++j) acc[i * kPanel + j] = bias ? bias[p * kPanel + j] : 0.f;
        AccumulatePanelAvx512(x + img * s.h * s.w * s.c, s.c, s.h, s.w, s.stride, w.data() + p * panel_floats, end,
                              acc);
        act.Apply(acc, pixels * kPanel);
        float* out = y + img * pixels * s.m + p * kPanel;
        if (sum) {
          for (int64_t i = 0; i < pixels; ++i)
            for (int64_t j = 0; j < kPanel; ++j) acc[i * kPanel + j] += out[i * s.m + j];
          sum_act.Apply(acc, pixels * kPanel);
        }
        for (int64_t i = 0; i < pixels; ++i) std::copy_n(acc + i * kPanel, kPanel, out + i * s.m);
      }
  };
  if (threads > 1 && panels > 1) {
#pragma omp parallel num_threads(threads)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      share(panels * t / nt, panels * (t + 1) / nt);
    }
  } else {
    share(0, panels);
  }
#else
  (void)s, (void)x, (void)w, (void)bias, (void)act, (void)sum, (void)sum_act, (void)y, (void)threads;
#endif
}

}  // namespace tandem::cpu::small_map
