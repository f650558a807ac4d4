// float32 inference BatchNormalization as a per-channel scale and shift, shared by the
// BatchNormalization kernel (norm.cc) and ConcatBatchNorm (concat_norm_ops.cc):
// y = x * a[c] + b[c] with a = scale / sqrt(var + epsilon), b = B - mean * a, then
// max(y, 0) with a folded Relu.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tandem::cpu {

// a and b of C channels from the BatchNormalization parameters.
inline void InferenceScaleShift(const float* scale, const float* bias, const float* mean, const float* var,
                                float epsilon, int64_t C, std::vector<float>& a, std::vector<float>& b) {
  a.resize(C);
  b.resize(C);
  for (int64_t c = 0; c < C; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + epsilon);
    b[c] = bias[c] - mean[c] * a[c];
  }
}

// y[i][k] = x[i][k] * a[k] + b[k] (then max with 0 when kRelu) over `rows` rows of kB.
template <int kB, bool kRelu>
void ScaleShiftRows(const float* x, float* y, int64_t rows, const float* a, const float* b) {
  float av[kB], bv[kB];
  for (int k = 0; k < kB; ++k) av[k] = a[k], bv[k] = b[k];
  for (int64_t i = 0; i < rows; ++i)
    for (int k = 0; k < kB; ++k) {
      const float v = x[i * kB + k] * av[k] + bv[k];
      y[i * kB + k] = kRelu ? std::max(v, 0.f) : v;
    }
}

// The same over `rows` rows of `width` channels, row i read at x + i * x_stride and written
// at y + i * y_stride (a channels-last piece of a wider map).
template <bool kRelu>
void ScaleShiftStridedRows(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows,
                           int64_t width, const float* a, const float* b) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* xi = x + i * x_stride;
    float* yi = y + i * y_stride;
    for (int64_t k = 0; k < width; ++k) {
      const float v = xi[k] * a[k] + b[k];
      yi[k] = kRelu ? std::max(v, 0.f) : v;
    }
  }
}

inline void ScaleShiftStridedRows(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t rows,
                                  int64_t width, const float* a, const float* b, bool relu) {
  if (relu) {
    ScaleShiftStridedRows<true>(x, x_stride, y, y_stride, rows, width, a, b);
  } else {
    ScaleShiftStridedRows<false>(x, x_stride, y, y_stride, rows, width, a, b);
  }
}

// `rows` contiguous rows of one channel block of B channels (8 and 16 as constants, so each
// row is one vector step; any other B, such as channels-last's all channels, as a loop).
inline void ScaleShiftBlockRows(const float* x, float* y, int64_t rows, int64_t B, const float* a, const float* b,
                                bool relu) {
  if (B == 16) {
    relu ? ScaleShiftRows<16, true>(x, y, rows, a, b) : ScaleShiftRows<16, false>(x, y, rows, a, b);
  } else if (B == 8) {
    relu ? ScaleShiftRows<8, true>(x, y, rows, a, b) : ScaleShiftRows<8, false>(x, y, rows, a, b);
  } else {
    ScaleShiftStridedRows(x, B, y, B, rows, B, a, b, relu);
  }
}

}  // namespace tandem::cpu
