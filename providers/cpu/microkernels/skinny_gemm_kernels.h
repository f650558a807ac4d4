// The panel loops of skinny_gemm.h for one instruction set: a table of plain function
// pointers, all the per-ISA files (skinny_gemm_{generic,avx2,avx512}.cc) share with the
// rest, so nothing inline is compiled with a wider ISA than its callers run.
#pragma once
#include <cstdint>

namespace tandem::cpu::skinny {

constexpr int kMaxRows = 4;  // rows one panel product takes

struct Kernels {
  const char* isa;
  int panel;  // columns per panel
  // acc[m][panel] = A[m, k] (row stride lda) times one packed panel ([k][panel]), m <= kMaxRows.
  void (*panel_product)(const float* a, int64_t lda, int m, const float* packed, int64_t k, float* acc);
};

}  // namespace tandem::cpu::skinny
