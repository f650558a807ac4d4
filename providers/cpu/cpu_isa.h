// Which of Tandem's own CPU code paths this process may use. oneDNN picks its kernels by
// the CPU's instruction set, capped by the environment variable ONEDNN_MAX_CPU_ISA (or
// DNNL_MAX_CPU_ISA); Tandem's own paths chosen by CPU features (the dense-chain tile
// loops' AVX2 build, the skinny products' AVX2 and AVX-512 builds) follow the same cap,
// so one setting makes the whole CPU provider run as it would on an older CPU, e.g.
// ONEDNN_MAX_CPU_ISA=SSE41 for the baseline x86-64 paths (the ISA ctest entries run the
// parity and conformance tests that way).
#pragma once
#include <string_view>
#include <vector>

namespace tandem::cpu {

// Whether a cap (a value of ONEDNN_MAX_CPU_ISA in any case; empty: none) admits AVX2:
// SSE41 and AVX are below it; AVX2, AVX2_VNNI, AVX512_*, ALL and any other value are not.
bool CapAdmitsAvx2(std::string_view cap);

// Whether AVX2 + FMA code may run: the CPU has both and the cap in the environment admits
// it. Read once per process.
bool Avx2Allowed();

// Whether a cap admits AVX-512: none, ALL, and the AVX512_* and AVX10_* values do; the
// AVX2 family and below do not.
bool CapAdmitsAvx512(std::string_view cap);
// Whether AVX-512F (+ FMA) code may run: the CPU has it and the cap admits it.
bool Avx512Allowed();

// The builds of one family of Tandem's own kernels (skinny products, channels-last pool)
// that this process may run, baseline first and widest last; `avx2` / `avx512` are null
// where that build is not compiled in.
template <typename Kernels>
std::vector<const Kernels*> RunnableBuilds(const Kernels& baseline, const Kernels* avx2, const Kernels* avx512) {
  std::vector<const Kernels*> all = {&baseline};
  if (avx2 && Avx2Allowed()) all.push_back(avx2);
  if (avx512 && Avx512Allowed()) all.push_back(avx512);
  return all;
}

}  // namespace tandem::cpu
