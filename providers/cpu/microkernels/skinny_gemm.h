// Products of a few rows (a dense layer at batch 1-4) with a constant weight matrix:
// Y[m, n] = A[m, k] B'[k, n], m <= kMaxRows. Such a product reads each weight once
// and does one multiply-add with it per row, so it runs at the pace weights stream from
// memory or cache. B' is packed once into column panels (the panel's k rows contiguous,
// aligned), each panel's products are summed in vector registers over all of k, and the
// threads take whole panels: every thread streams its own contiguous part of the
// weights (oneDNN's matmul at m = 1 reached about half that pace on AVX-512). Each call
// walks a thread's panels in the opposite order of the call before, so the panels the
// last call read last (still in that core's cache) are read first: a share a little
// larger than the core's cache is then mostly re-read from cache, where a fixed order
// would evict each panel just before it is needed again. The order of panels changes no
// result (each panel's columns are summed on their own).
//
// The panel loops are compiled for the baseline x86-64 instruction set, for AVX2 + FMA
// and for AVX-512 (skinny_gemm_{generic,avx2,avx512}.cc); Builds().best() is
// the widest the CPU has and ONEDNN_MAX_CPU_ISA admits (cpu_isa.h). Each float32 sum runs
// over k in order with fused multiply-adds where the ISA has them (no reduced precision).
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "graph/tensor.h"
#include "providers/cpu/host_memory.h"
#include "providers/cpu/lazy_constant_copy.h"
#include "providers/cpu/microkernels/isa_dispatch.h"
#include "providers/cpu/microkernels/skinny_gemm_kernels.h"

namespace tandem::cpu::skinny {

// Every kernel set this CPU (and ONEDNN_MAX_CPU_ISA) can run, baseline first, and the
// widest of them, which the products use. Tests compare them all.
const IsaBuilds<Kernels>& Builds();

// B' packed for one kernel set: panel p holds columns [p * panel, (p + 1) * panel) of
// every row of B', zero past n.
class PackedWeights {
 public:
  // B' = B [k, n], or B^T for B [n, k] when trans_b.
  PackedWeights(const float* b, bool trans_b, int64_t k, int64_t n, const Kernels& kernels);

  // y[m, n] = alpha * A[m, k] B' + beta * bias[n] (bias may be null: no term), kMaxRows
  // rows at a time; the panels spread over `threads` OpenMP threads.
  void Multiply(const float* a, int m, float alpha, const float* bias, float beta, float* y, int threads) const;

 private:
  const float* data() const { return static_cast<const float*>(data_.get()); }
  int64_t k_, n_, panels_;
  const Kernels* kernels_;
  HostBuffer data_;  // the panels (host_memory.h: huge pages for large weights)
  mutable std::atomic<uint64_t> calls_{0};  // odd: the next call walks panels backwards
};

// A kernel's constant weights b, packed by the first run that needs them (kernels of one
// session may run on several threads at once); one copy per tensor and form in the process,
// shared with every kernel that reads the same b (packed_weights.h).
class LazyPackedWeights {
 public:
  const PackedWeights& Get(const Tensor& b, bool trans_b, int64_t k, int64_t n);

 private:
  LazyConstantCopy<PackedWeights> copy_;
};

// Whether a float32 product of m rows over k x n weights should take this path: few rows,
// enough weights that streaming them dominates, and not so many that a packed copy
// (kept beside the initializer) costs more than 64 MiB.
inline bool IsSkinny(int64_t m, int64_t k, int64_t n) {
  return m >= 1 && m <= kMaxRows && k >= 64 && k * n >= (int64_t{1} << 15) && k * n <= (int64_t{1} << 24);
}

// Products computed on this path since the process started (tests check that a case
// they mean for it took it).
int64_t ProductsRun();

}  // namespace tandem::cpu::skinny
