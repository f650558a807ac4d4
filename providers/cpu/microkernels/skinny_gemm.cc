#include "providers/cpu/microkernels/skinny_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include <omp.h>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/microkernels/isa_dispatch.h"
#include "providers/cpu/packed_weights.h"

namespace tandem::cpu::skinny {

extern const Kernels kBaselineKernels, kAvx2Kernels, kAvx512Kernels;  // one per build (isa_dispatch.h)

const IsaBuilds<Kernels>& Builds() {
  return BuildsOf(kBaselineKernels, TANDEM_AVX2_TABLE(kAvx2Kernels), TANDEM_AVX512_TABLE(kAvx512Kernels));
}

PackedWeights::PackedWeights(const float* b, bool trans_b, int64_t k, int64_t n, const Kernels& kernels)
    : k_(k), n_(n), panels_((n + kernels.panel - 1) / kernels.panel), kernels_(&kernels) {
  const int64_t w = kernels.panel;
  const size_t count = static_cast<size_t>(panels_ * k * w);
  data_ = MakeHostBuffer(count * sizeof(float));  // aligned to at least a cache line and a register
  if (!data_) throw std::bad_alloc();
  float* out = static_cast<float*>(data_.get());
  for (int64_t p = 0; p < panels_; ++p)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < w; ++j) {
        const int64_t col = p * w + j;
        *out++ = col >= n ? 0.f : trans_b ? b[col * k + kk] : b[kk * n + col];
      }
}

namespace {
std::atomic<int64_t> products_run{0};
}  // namespace

int64_t ProductsRun() { return products_run.load(std::memory_order_relaxed); }

void PackedWeights::Multiply(const float* a, int m, float alpha, const float* bias, float beta, float* y,
                             int threads) const {
  products_run.fetch_add(1, std::memory_order_relaxed);
  const int64_t w = kernels_->panel;
  const bool backward = calls_.fetch_add(1, std::memory_order_relaxed) & 1;
  auto panel = [&](int64_t p) {
    alignas(64) float acc[kMaxRows * 64];  // kMaxRows rows of one panel (at most 64 columns)
    const int64_t col0 = p * w, cols = std::min(w, n_ - col0);
    for (int r0 = 0; r0 < m; r0 += kMaxRows) {
      const int rows = std::min(kMaxRows, m - r0);
      kernels_->panel_product(a + r0 * k_, k_, rows, data() + p * k_ * w, k_, acc);
      for (int i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const float v = alpha * acc[i * w + j];
          y[(r0 + i) * n_ + col0 + j] = bias ? v + beta * bias[col0 + j] : v;
        }
    }
  };
  auto share = [&](int64_t lo, int64_t hi) {  // a thread's panels, the same ones every call
    if (backward)
      for (int64_t p = hi - 1; p >= lo; --p) panel(p);
    else
      for (int64_t p = lo; p < hi; ++p) panel(p);
  };
  if (threads > 1 && panels_ > 1) {
#pragma omp parallel
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      share(panels_ * t / nt, panels_ * (t + 1) / nt);
    }
  } else {
    share(0, panels_);
  }
}

const PackedWeights& LazyPackedWeights::Get(const Tensor& b, bool trans_b, int64_t k, int64_t n) {
  // The panels of one product shape for one kernel set.
  struct Form {
    bool trans_b;
    int64_t k, n;
    const Kernels* kernels;
    bool operator==(const Form& o) const {
      return trans_b == o.trans_b && k == o.k && n == o.n && kernels == o.kernels;
    }
  };
  static ConstantCopies<Form, PackedWeights> copies;
  return copy_.Get([&] {
    const Kernels& kernels = Builds().best();
    return copies.Get(b, Form{trans_b, k, n, &kernels}, [&] {
      return std::make_unique<const PackedWeights>(b.data<float>(), trans_b, k, n, kernels);
    });
  });
}

}  // namespace tandem::cpu::skinny
