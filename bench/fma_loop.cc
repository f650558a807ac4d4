#include "bench/fma_loop.h"

#include <omp.h>

#include "bench/fma_loop_chains.h"
#include "providers/cpu/cpu_isa.h"

namespace tandem::bench {

int FmaLoopBits() {
  if (cpu::Avx512Allowed()) return 512;
  if (cpu::Avx2Allowed()) return 256;
  return 0;
}

double FmaLoopGflops(long iterations) {
  const int bits = FmaLoopBits();
  if (bits == 0 || iterations <= 0) return 0;
  volatile float sink = 0;
  int threads = 1;
  const double t0 = omp_get_wtime();
#pragma omp parallel
  {
    const float v = bits == 512 ? FmaChains512(iterations) : FmaChains256(iterations);
#pragma omp critical
    sink = sink + v;
#pragma omp single
    threads = omp_get_num_threads();
  }
  const double seconds = omp_get_wtime() - t0;
  const double chains = bits == 512 ? kFmaChains512 : kFmaChains256;
  const double flops = 2.0 * chains * (bits / 32) * static_cast<double>(iterations) * threads;
  return flops / seconds * 1e-9;
}

}  // namespace tandem::bench
