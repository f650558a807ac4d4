// A float64 2-D convolution (and Relu) for tests to compare the CPU provider's convolutions with.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace tandem::testing {

// y[n, m, oh, ow] = b[m] + sum x[n, c, oh*s + kh - p, ow*s + kw - p] * w[m, c, kh, kw] for
// square H x H images, x [N, C, H, H] and w [M, C, k, k]; *out_h = the output's side.
inline std::vector<double> Conv2d(const std::vector<double>& x, int64_t N, int64_t C, int64_t H,
                           const std::vector<double>& w, const std::vector<double>& b, int64_t M,
                           int64_t k, int64_t s, int64_t p, int64_t* out_h) {
  const int64_t oh_n = (H + 2 * p - k) / s + 1;
  *out_h = oh_n;
  std::vector<double> y(N * M * oh_n * oh_n);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < oh_n; ++ow) {
          double acc = b[m];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t kh = 0; kh < k; ++kh)
              for (int64_t kw = 0; kw < k; ++kw) {
                const int64_t ih = oh * s + kh - p, iw = ow * s + kw - p;
                if (ih < 0 || ih >= H || iw < 0 || iw >= H) continue;
                acc += x[((n * C + c) * H + ih) * H + iw] * w[((m * C + c) * k + kh) * k + kw];
              }
          y[((n * M + m) * oh_n + oh) * oh_n + ow] = acc;
        }
  return y;
}

// v = max(v, 0) elementwise.
inline void Relu(std::vector<double>& v) {
  for (double& e : v) e = std::max(e, 0.0);
}

}  // namespace tandem::testing
