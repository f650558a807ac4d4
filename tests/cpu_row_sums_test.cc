// The contiguous-row and column sums of the CPU's Reduce kernels
// (providers/cpu/microkernels/row_sums.h), in each build this CPU can run, against float64 sums of x, x² and |x|: row lengths below a
// vector, a block with a tail, several blocks with a tail, values of both signs and of
// magnitudes 1e-3 to 1e3 (each term in float, as the kernels take them, then summed in
// float64). The kernels that use them are checked against onnx.reference in float64 by
// tests/op_reference/reduce_cases.py (reduce_reference, on each instruction set).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "providers/cpu/microkernels/row_sums.h"

namespace tandem {
namespace {

using cpu::row_sums::Term;

// The float64 sum of the terms of x[0], x[step], ... (count of them), each term in float as
// the kernels take it, and the sum of their magnitudes.
struct Reference {
  double sum = 0, magnitude = 0;
};
Reference SumOf(const float* x, int64_t count, int64_t step, Term term) {
  Reference r;
  for (int64_t i = 0; i < count; ++i) {
    const float v = x[i * step];
    const float t = term == Term::kValue ? v : term == Term::kSquare ? v * v : std::fabs(v);
    r.sum += t;
    r.magnitude += std::fabs(t);
  }
  return r;
}

TEST(CpuRowSums, EachBuildMatchesFloat64) {
  for (const cpu::row_sums::Kernels* k : cpu::row_sums::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{300}, int64_t{4099}}) {
      const int64_t rows = 3;
      std::vector<float> x(static_cast<size_t>(rows * n));
      for (int64_t i = 0; i < rows * n; ++i)
        x[i] = std::sin(0.37f * static_cast<float>(i)) * std::pow(10.f, static_cast<float>(i % 7) - 3.f);
      for (const Term term : {Term::kValue, Term::kSquare, Term::kAbsolute}) {
        std::vector<double> got(rows, -1.0);
        k->sum_rows(x.data(), rows, n, term, got.data());
        for (int64_t r = 0; r < rows; ++r) {
          const Reference want = SumOf(x.data() + r * n, n, 1, term);
          // float lanes over blocks of 256: a few float roundings of the terms' magnitude
          EXPECT_NEAR(got[r], want.sum, 2e-6 * want.magnitude) << "n " << n << ", row " << r << ", term "
                                                               << static_cast<int>(term);
        }
      }
    }
  }
}

TEST(CpuRowSums, EachBuildsColumnSumsMatchFloat64) {
  // Widths below a vector, one 64-column chunk with a tail, several; rows of one block and
  // of several with a tail; rows longer than the columns summed (stride > n).
  for (const cpu::row_sums::Kernels* k : cpu::row_sums::Builds().runnable()) {
    SCOPED_TRACE(k->isa);
    for (const int64_t n : {int64_t{3}, int64_t{64}, int64_t{100}, int64_t{384}}) {
      for (const int64_t rows : {int64_t{1}, int64_t{16}, int64_t{700}}) {
        const int64_t stride = n + 5;
        std::vector<float> x(static_cast<size_t>(rows * stride));
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = std::sin(0.29f * static_cast<float>(i)) * std::pow(10.f, static_cast<float>(i % 5) - 2.f);
        for (const Term term : {Term::kValue, Term::kSquare, Term::kAbsolute}) {
          std::vector<double> got(n, -1.0);
          k->sum_columns(x.data(), rows, n, stride, term, got.data());
          for (int64_t j = 0; j < n; ++j) {
            const Reference want = SumOf(x.data() + j, rows, stride, term);
            EXPECT_NEAR(got[j], want.sum, 2e-6 * want.magnitude)
                << "n " << n << ", rows " << rows << ", column " << j << ", term " << static_cast<int>(term);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem
