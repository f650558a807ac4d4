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

// Columns in chunks of kColumns float lanes, rows in blocks of kBlock.
template <typename F>
void SumColumnsOf(const float* x, int64_t rows, int64_t n, int64_t stride, F term, double* out) {
  constexpr int64_t kColumns = 64;
  for (int64_t c0 = 0; c0 < n; c0 += kColumns) {
    const int64_t width = std::min(kColumns, n - c0);
    double total[kColumns] = {};
    for (int64_t b = 0; b < rows; b += kBlock) {
      const int64_t e = std::min(rows, b + kBlock);
      float lanes[kColumns] = {};
      if (width == kColumns) {
        for (int64_t r = b; r < e; ++r)
          for (int64_t j = 0; j < kColumns; ++j) lanes[j] += term(x[r * stride + c0 + j]);
      } else {
        for (int64_t r = b; r < e; ++r)
          for (int64_t j = 0; j < width; ++j) lanes[j] += term(x[r * stride + c0 + j]);
      }
      for (int64_t j = 0; j < width; ++j) total[j] += lanes[j];
    }
    std::copy(total, total + width, out + c0);
  }
}

void SumColumns(const float* x, int64_t rows, int64_t n, int64_t stride, Term term, double* out) {
  switch (term) {
    case Term::kValue: SumColumnsOf(x, rows, n, stride, [](float v) { return v; }, out); break;
    case Term::kSquare: SumColumnsOf(x, rows, n, stride, [](float v) { return v * v; }, out); break;
    case Term::kAbsolute: SumColumnsOf(x, rows, n, stride, [](float v) { return std::fabs(v); }, out); break;
  }
}

}  // namespace tandem::cpu::row_sums::ROW_SUMS_ISA
