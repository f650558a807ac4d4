// The columns of a convolution's input for one image: col [C * k0 * k1 * k2, o0 * o1 * o2],
// row (c, k0, k1, k2) holding, for each output position, the input value that kernel tap
// multiplies (`pad` where the tap falls in the padding), so that the convolution is the
// product W [M, C * k0 * k1 * k2] x col (ConvInteger's integer products, with `pad` the
// input's zero point: padding then contributes (pad - zero point) = 0, as in the definition).
// x is one image [C, i0, i1, i2] in NC... layout; g is the window geometry (kernel_util.h's
// Geo3: 1-D and 2-D padded with unit dims).
#pragma once
#include <cstdint>

#include "providers/cpu/kernel_util.h"

namespace tandem::cpu {

template <typename T>
void ConvColumns(const T* x, int64_t C, const Geo3& g, T pad, T* col) {
  const int64_t P = g.out_size(), kvol = g.k_size();
  ParallelForIf(C * kvol * P >= (1 << 16), C * kvol, [&](int64_t row) {
    const int64_t c = row / kvol, k0 = row / (g.k[1] * g.k[2]) % g.k[0], k1 = row / g.k[2] % g.k[1],
                  k2 = row % g.k[2];
    const T* xc = x + c * g.in_size();
    T* dst = col + row * P;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
      const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
        const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
        const bool inside01 = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1];
        const T* xr = xc + (i0 * g.in[1] + i1) * g.in[2];
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const int64_t i2 = o2 * g.s[2] - g.pb[2] + k2 * g.d[2];
          *dst++ = inside01 && i2 >= 0 && i2 < g.in[2] ? xr[i2] : pad;
        }
      }
    }
  });
}

}  // namespace tandem::cpu
