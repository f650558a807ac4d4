// The tile loops of dense_chain_tiles.h, compiled once per instruction set: a translation
// unit defines DENSE_CHAIN_ISA (the namespace that keeps each build's symbols apart) and
// includes this file. It calls no inline code from other headers, so no function compiled
// for AVX2 can stand in for a baseline one at link time.
#include <cstddef>

#include "providers/cpu/microkernels/dense_chain_tiles.h"

namespace tandem::cpu::dense_chain::DENSE_CHAIN_ISA {

// dst [cols][T] = the first `rows` rows of src [rows][cols] transposed; rows rows..T-1 zero.
template <int T>
void LoadTransposed(const float* src, int64_t rows, int64_t cols, float* dst) {
  if (cols == 1) {  // a copy (e.g. the target of a one-output regressor)
    for (int64_t r = 0; r < rows; ++r) dst[r] = src[r];
    for (int64_t r = rows; r < T; ++r) dst[r] = 0.f;
    return;
  }
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

// v = f(v) for Tanh and Sigmoid (Relu and Identity are applied as rows are stored).
inline void ActivateInPlace(Act act, float* v, int64_t n) {
  if (act == Act::kTanh || act == Act::kSigmoid) ActivateTranscendental(act, v, n);
}

// out[t] = acc[t] with Relu applied when `relu`.
template <int T>
inline void StoreRow(bool relu, const float* acc, float* out) {
  if (relu) {
    for (int t = 0; t < T; ++t) out[t] = acc[t] > 0.f ? acc[t] : 0.f;
  } else {
    for (int t = 0; t < T; ++t) out[t] = acc[t];
  }
}

// out[t] = acc[t] * f'(z), written with the activation's output y = f(z).
template <int T>
inline void StoreTimesDerivative(Act act, const float* y, const float* acc, float* out) {
  switch (act) {
    case Act::kIdentity:
      for (int t = 0; t < T; ++t) out[t] = acc[t];
      return;
    case Act::kRelu:
      for (int t = 0; t < T; ++t) out[t] = y[t] > 0.f ? acc[t] : 0.f;
      return;
    case Act::kTanh:
      for (int t = 0; t < T; ++t) out[t] = acc[t] * (1.f - y[t] * y[t]);
      return;
    case Act::kSigmoid:
      for (int t = 0; t < T; ++t) out[t] = acc[t] * (y[t] * (1.f - y[t]));
      return;
  }
}

// For j < n: finish(j, acc) with acc [T] = base[j] (or 0) + sum_{k < m} coef(j, k) in [k][T]
// (m >= 1); two rows j at a time so each loaded row of `in` feeds two multiply-adds. The
// sums start from the first product, not from a zeroed array (which compilers turn into a
// memset call per row).
template <int T, typename Coef, typename Finish>
void AxpyRows(int64_t n, int64_t m, const float* base, Coef coef, const float* in, Finish finish) {
  int64_t j = 0;
  for (; j + 2 <= n; j += 2) {
    float a0[T], a1[T];
    const float b0 = base ? base[j] : 0.f, b1 = base ? base[j + 1] : 0.f;
    const float c00 = coef(j, 0), c10 = coef(j + 1, 0);
    for (int t = 0; t < T; ++t) {
      a0[t] = b0 + c00 * in[t];
      a1[t] = b1 + c10 * in[t];
    }
    for (int64_t k = 1; k < m; ++k) {
      const float c0 = coef(j, k), c1 = coef(j + 1, k);
      const float* x = in + k * T;
      for (int t = 0; t < T; ++t) {
        a0[t] += c0 * x[t];
        a1[t] += c1 * x[t];
      }
    }
    finish(j, a0);
    finish(j + 1, a1);
  }
  if (j < n) {
    float a0[T];
    const float b0 = base ? base[j] : 0.f, c00 = coef(j, 0);
    for (int t = 0; t < T; ++t) a0[t] = b0 + c00 * in[t];
    for (int64_t k = 1; k < m; ++k) {
      const float c0 = coef(j, k);
      const float* x = in + k * T;
      for (int t = 0; t < T; ++t) a0[t] += c0 * x[t];
    }
    finish(j, a0);
  }
}

// out [L.out][T] = f(W in + b) for in [L.in][T].
template <int T>
void LayerForward(const Layer& L, const float* in, float* out) {
  const float* w = L.w;
  const int64_t ld = L.in;
  const bool relu = L.act == Act::kRelu;
  AxpyRows<T>(
      L.out, L.in, L.b, [w, ld](int64_t j, int64_t k) { return w[j * ld + k]; }, in,
      [relu, out](int64_t j, const float* acc) { StoreRow<T>(relu, acc, out + j * T); });
  ActivateInPlace(L.act, out, L.out * T);
}

// gin [L.in][T] = (W^T g) * f'(z) for g [L.out][T], where `in_act` produced the layer's
// input y [L.in][T] = f(z) (Identity for the chain's X).
template <int T>
void LayerInputGrad(const Layer& L, Act in_act, const float* y, const float* g, float* gin) {
  const float* w = L.w;
  const int64_t ld = L.in;
  AxpyRows<T>(
      L.in, L.out, nullptr, [w, ld](int64_t k, int64_t j) { return w[j * ld + k]; }, g,
      [in_act, y, gin](int64_t k, const float* acc) { StoreTimesDerivative<T>(in_act, y + k * T, acc, gin + k * T); });
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

// g [n][T] (the target's rows, transposed) becomes scale (y - target) on the tile's `rows`
// rows and 0 on its padding rows; returns the sum of their squared errors.
template <int T>
double SquaredErrorGrad(const float* y, int64_t n, int64_t rows, float scale, float* g) {
  float sq[kLanes];  // partial sums, so the loops vectorize
  for (int v = 0; v < kLanes; ++v) sq[v] = 0.f;
  for (int64_t c = 0; c < n; ++c) {
    const float* yc = y + c * T;
    float* gc = g + c * T;
    int64_t t = 0;
    for (; t + kLanes <= rows; t += kLanes)
      for (int v = 0; v < kLanes; ++v) {
        const float d = yc[t + v] - gc[t + v];
        sq[v] += d * d;
        gc[t + v] = scale * d;
      }
    for (; t < rows; ++t) {
      const float d = yc[t] - gc[t];
      sq[0] += d * d;
      gc[t] = scale * d;
    }
    for (; t < T; ++t) gc[t] = 0.f;
  }
  double sum = 0;
  for (int v = 0; v < kLanes; ++v) sum += sq[v];
  return sum;
}

template <int T>
void BackwardTile(const Chain& chain, const OutputGrad& og, const float* x, int64_t row, int64_t rows,
                  float* scratch, float* lanes, double* sums, double* loss, float* dx) {
  // a(l) [K_l][T]: the input of layer l (a(0) = X); a(n) the chain's output.
  const size_t n = chain.layers.size();
  auto a = [&](size_t l) { return scratch + chain.width_before[l] * T; };
  float* g = a(n) + chain.out() * T;
  float* gin = g + chain.max_width * T;
  LoadTransposed<T>(x + row * chain.in(), rows, chain.in(), a(0));
  for (size_t l = 0; l < n; ++l) LayerForward<T>(chain.layers[l], a(l), a(l + 1));
  LoadTransposed<T>((og.target ? og.target : og.dy) + row * chain.out(), rows, chain.out(), g);
  if (og.target) *loss += SquaredErrorGrad<T>(a(n), chain.out(), rows, og.scale, g);
  for (int64_t c = 0; c < chain.out(); ++c)
    StoreTimesDerivative<T>(chain.layers[n - 1].act, a(n) + c * T, g + c * T, g + c * T);
  for (size_t l = n; l-- > 0;) {
    const Layer& L = chain.layers[l];
    const int64_t at = chain.sum_offset[l];
    LayerWeightGrad<T>(L, a(l), g, lanes ? lanes + at * kLanes : nullptr, sums ? sums + at : nullptr);
    if (l == 0 && !dx) break;
    LayerInputGrad<T>(L, l > 0 ? chain.layers[l - 1].act : Act::kIdentity, a(l), g, gin);
    float* t = g;
    g = gin;
    gin = t;
  }
  if (dx) StoreTransposed<T>(g, rows, chain.in(), dx + row * chain.in());
}

inline void BackwardWide(const Chain& c, const OutputGrad& og, const float* x, int64_t row, int64_t rows,
                         float* scratch, float* lanes, double* loss, float* dx) {
  BackwardTile<kWide>(c, og, x, row, rows, scratch, lanes, nullptr, loss, dx);
}

template <int T>
void BackwardSums(const Chain& c, const OutputGrad& og, const float* x, int64_t row, int64_t rows,
                  float* scratch, double* sums, double* loss, float* dx) {
  BackwardTile<T>(c, og, x, row, rows, scratch, nullptr, sums, loss, dx);
}

}  // namespace tandem::cpu::dense_chain::DENSE_CHAIN_ISA
