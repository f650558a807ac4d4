// The tile loops of dense_chain_tiles.h, compiled once per instruction set: a translation
// unit defines DENSE_CHAIN_ISA (the namespace that keeps each build's symbols apart) and
// includes this file. It calls no inline code from other headers, so no function compiled
// for AVX2 can stand in for a baseline one at link time.
#include <cstddef>

#include "providers/cpu/kernels/dense_chain_tiles.h"

namespace tandem::cpu::dense_chain::DENSE_CHAIN_ISA {

// dst [cols][T] = the first `rows` rows of src [rows][cols] transposed; rows rows..T-1 zero.
template <int T>
void LoadTransposed(const float* src, int64_t rows, int64_t cols, float* dst) {
  for (int64_t c = 0; c < cols; ++c) {
    float* d = dst + c * T;
    for (int64_t r = 0; r < rows; ++r) d[r] = src[r * cols + c];
    for (int64_t r = rows; r < T; ++r) d[r] = 0.f;
  }
}

// The first `rows` rows of dst [rows][cols] = src [cols][T] transposed.
template <int T>
void StoreTransposed(const float* src, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = src[c * T + r];
}

inline void Activate(Act act, float* v, int64_t n) {
  if (act == Act::kRelu) {
    for (int64_t i = 0; i < n; ++i) v[i] = v[i] > 0.f ? v[i] : 0.f;
  } else if (act != Act::kIdentity) {
    ActivateTranscendental(act, v, n);
  }
}

// g *= f'(z), written with the activation's output y = f(z).
inline void MultiplyByDerivative(Act act, const float* y, float* g, int64_t n) {
  switch (act) {
    case Act::kIdentity: return;
    case Act::kRelu:
      for (int64_t i = 0; i < n; ++i) g[i] = y[i] > 0.f ? g[i] : 0.f;
      return;
    case Act::kTanh:
      for (int64_t i = 0; i < n; ++i) g[i] *= 1.f - y[i] * y[i];
      return;
    case Act::kSigmoid:
      for (int64_t i = 0; i < n; ++i) g[i] *= y[i] * (1.f - y[i]);
      return;
  }
}

// out [n][T] = base[j] (or 0) + sum_k coef(j, k) * in [k][T] for j < n, k < m; two rows
// of out at a time so each loaded row of `in` feeds two multiply-adds.
template <int T, typename Coef>
void AxpyRows(int64_t n, int64_t m, const float* base, Coef coef, const float* in, float* out) {
  int64_t j = 0;
  for (; j + 2 <= n; j += 2) {
    float a0[T], a1[T];
    const float b0 = base ? base[j] : 0.f, b1 = base ? base[j + 1] : 0.f;
    for (int t = 0; t < T; ++t) {
      a0[t] = b0;
      a1[t] = b1;
    }
    for (int64_t k = 0; k < m; ++k) {
      const float c0 = coef(j, k), c1 = coef(j + 1, k);
      const float* x = in + k * T;
      for (int t = 0; t < T; ++t) {
        a0[t] += c0 * x[t];
        a1[t] += c1 * x[t];
      }
    }
    for (int t = 0; t < T; ++t) {
      out[j * T + t] = a0[t];
      out[(j + 1) * T + t] = a1[t];
    }
  }
  if (j < n) {
    float a0[T];
    for (int t = 0; t < T; ++t) a0[t] = base ? base[j] : 0.f;
    for (int64_t k = 0; k < m; ++k) {
      const float c0 = coef(j, k);
      const float* x = in + k * T;
      for (int t = 0; t < T; ++t) a0[t] += c0 * x[t];
    }
    for (int t = 0; t < T; ++t) out[j * T + t] = a0[t];
  }
}

// out [L.out][T] = f(W in + b) for in [L.in][T].
template <int T>
void LayerForward(const Layer& L, const float* in, float* out) {
  const float* w = L.w;
  const int64_t ld = L.in;
  AxpyRows<T>(L.out, L.in, L.b, [w, ld](int64_t j, int64_t k) { return w[j * ld + k]; }, in, out);
  Activate(L.act, out, L.out * T);
}

// gin [L.in][T] = W^T g for g [L.out][T].
template <int T>
void LayerInputGrad(const Layer& L, const float* g, float* gin) {
  const float* w = L.w;
  const int64_t ld = L.in;
  AxpyRows<T>(L.in, L.out, nullptr, [w, ld](int64_t k, int64_t j) { return w[j * ld + k]; }, g, gin);
}

// Adds sum_t g[t] * x[t] (sum_t g[t] when x is null: the bias) to one gradient sum: as
// kLanes partial sums in wide tiles (no horizontal add per tile), or straight into the
// double sum in narrow ones.
template <int T, bool kBias>
inline void AddProducts(const float* g, const float* x, float* lane, double* sum) {
  if constexpr (T % kLanes == 0 && T > kLanes) {
    float s[kLanes];
    for (int v = 0; v < kLanes; ++v) s[v] = lane[v];
    for (int c = 0; c < T; c += kLanes)
      for (int v = 0; v < kLanes; ++v) s[v] += kBias ? g[c + v] : g[c + v] * x[c + v];
    for (int v = 0; v < kLanes; ++v) lane[v] = s[v];
  } else {
    float d = 0.f;
    for (int t = 0; t < T; ++t) d += kBias ? g[t] : g[t] * x[t];
    *sum += d;
  }
}

// Adds the tile's weight and bias gradients of layer L, g [out][T] times in [in][T], to
// its [out][in + 1] sums (bias last): `lanes` in wide tiles, `sums` in narrow ones.
template <int T>
void LayerWeightGrad(const Layer& L, const float* in, const float* g, float* lanes, double* sums) {
  for (int64_t j = 0; j < L.out; ++j) {
    const float* gj = g + j * T;
    const int64_t row = j * (L.in + 1);
    for (int64_t k = 0; k < L.in; ++k)
      AddProducts<T, false>(gj, in + k * T, lanes ? lanes + (row + k) * kLanes : nullptr,
                            sums ? sums + row + k : nullptr);
    AddProducts<T, true>(gj, nullptr, lanes ? lanes + (row + L.in) * kLanes : nullptr,
                         sums ? sums + row + L.in : nullptr);
  }
}

template <int T>
void ForwardTile(const Chain& chain, const float* x, int64_t row, int64_t rows, float* scratch, float* y) {
  float* a = scratch;
  float* b = scratch + chain.max_width * T;
  LoadTransposed<T>(x + row * chain.in(), rows, chain.in(), a);
  for (const Layer& L : chain.layers) {
    LayerForward<T>(L, a, b);
    float* t = a;
    a = b;
    b = t;
  }
  StoreTransposed<T>(a, rows, chain.out(), y + row * chain.out());
}

template <int T>
void BackwardTile(const Chain& chain, const float* dy, const float* x, int64_t row, int64_t rows,
                  float* scratch, float* lanes, double* sums, float* dx) {
  // a(l) [K_l][T]: the input of layer l (a(0) = X); a(n) the chain's output.
  const size_t n = chain.layers.size();
  auto a = [&](size_t l) { return scratch + chain.width_before[l] * T; };
  float* g = a(n) + chain.out() * T;
  float* gin = g + chain.max_width * T;
  LoadTransposed<T>(x + row * chain.in(), rows, chain.in(), a(0));
  for (size_t l = 0; l < n; ++l) LayerForward<T>(chain.layers[l], a(l), a(l + 1));
  LoadTransposed<T>(dy + row * chain.out(), rows, chain.out(), g);
  MultiplyByDerivative(chain.layers[n - 1].act, a(n), g, chain.out() * T);
  for (size_t l = n; l-- > 0;) {
    const Layer& L = chain.layers[l];
    const int64_t at = chain.sum_offset[l];
    LayerWeightGrad<T>(L, a(l), g, lanes ? lanes + at * kLanes : nullptr, sums ? sums + at : nullptr);
    if (l == 0 && !dx) break;
    LayerInputGrad<T>(L, g, gin);
    if (l > 0) MultiplyByDerivative(chain.layers[l - 1].act, a(l), gin, L.in * T);
    float* t = g;
    g = gin;
    gin = t;
  }
  if (dx) StoreTransposed<T>(g, rows, chain.in(), dx + row * chain.in());
}

inline void BackwardWide(const Chain& c, const float* dy, const float* x, int64_t row, int64_t rows,
                         float* scratch, float* lanes, float* dx) {
  BackwardTile<kWide>(c, dy, x, row, rows, scratch, lanes, nullptr, dx);
}

template <int T>
void BackwardSums(const Chain& c, const float* dy, const float* x, int64_t row, int64_t rows, float* scratch,
                  double* sums, float* dx) {
  BackwardTile<T>(c, dy, x, row, rows, scratch, nullptr, sums, dx);
}

}  // namespace tandem::cpu::dense_chain::DENSE_CHAIN_ISA
