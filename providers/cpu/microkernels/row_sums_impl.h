// row_sums.h's loops, compiled once per instruction set: the including file defines
// ROW_SUMS_ISA (the namespace) and is built with the matching compiler flags; the compiler
// vectorizes the 16 independent lanes to that set's registers.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "providers/cpu/microkernels/row_sums.h"

namespace tandem::cpu::row_sums::ROW_SUMS_ISA {

constexpr int64_t kBlock = 256, kLanes = 16;

template <typename F>
double SumRow(const float* x, int64_t n, F term) {
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    float lanes[kLanes] = {};
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += term(x[i + l]);
    float block = 0;
    for (int64_t l = 0; l < kLanes; ++l) block += lanes[l];
    for (; i < e; ++i) block += term(x[i]);
    total += block;
  }
  return total;
}

void SumRows(const float* x, int64_t rows, int64_t n, Term term, double* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * n;
    switch (term) {
      case Term::kValue: out[r] = SumRow(row, n, [](float v) { return v; }); break;
      case Term::kSquare: out[r] = SumRow(row, n, [](float v) { return v * v; }); break;
      case Term::kAbsolute: out[r] = SumRow(row, n, [](float v) { return std::fabs(v); }); break;
    }
  }
}

}  // namespace tandem::cpu::row_sums::ROW_SUMS_ISA
