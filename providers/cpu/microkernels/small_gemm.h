// Direct float32 loops for matrix products too small for a oneDNN primitive: executing
// one (argument map, dispatch, stream wait) costs ~2-3 µs, while a 3x100 product is a
// few hundred multiply-adds. Gemm and MatMul (matmul.cc) take this path below
// kSmallGemmMacs; the 3-100-3 tanh network of a neural ODE is the case it exists for.
#pragma once
#include <cstdint>
#include <vector>

namespace tandem::cpu {

// Products of at most this many multiply-adds run here (m * k * n).
constexpr int64_t kSmallGemmMacs = 1 << 14;

inline bool IsSmallGemm(int64_t m, int64_t k, int64_t n) {
  return m > 0 && k > 0 && n > 0 && m <= kSmallGemmMacs / k / n;
}

// y[m, n] += alpha * A' B, A' = A [m, k] or, with trans_a, A^T for A [k, m]; B is [k, n]
// row-major (transpose a B^T first, see TransposeInto). Rows of y are accumulated as
// axpy updates over B's contiguous rows, which the compiler vectorizes.
inline void SmallGemmAccumulate(const float* a, bool trans_a, const float* b, float* y, int64_t m,
                                int64_t k, int64_t n, float alpha) {
  for (int64_t i = 0; i < m; ++i) {
    float* yr = y + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float aik = alpha * (trans_a ? a[kk * m + i] : a[i * k + kk]);
      const float* br = b + kk * n;
      for (int64_t j = 0; j < n; ++j) yr[j] += aik * br[j];
    }
  }
}

// out [cols, rows] = in [rows, cols]^T.
inline void TransposeInto(const float* in, int64_t rows, int64_t cols, std::vector<float>& out) {
  out.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

}  // namespace tandem::cpu
