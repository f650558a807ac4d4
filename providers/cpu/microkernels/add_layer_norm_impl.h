// The rows of add_layer_norm.h, compiled once per instruction set: the including file
// defines ADD_LN_ISA (the namespace) and ADD_LN_LANES (floats per vector register) and is
// built with the matching compiler flags.
#include <cmath>
#include <cstdint>

#include "providers/cpu/microkernels/add_layer_norm.h"

#define LANE_ISA ADD_LN_ISA
#define LANE_COUNT ADD_LN_LANES
#include "providers/cpu/microkernels/lane_vector.h"

namespace tandem::cpu::add_layer_norm::ADD_LN_ISA {

using namespace tandem::cpu::ADD_LN_ISA::lanes;  // NOLINT: this build's vectors

// One row: s = a + b (into `s`, this row's own storage), its mean and variance, then y.
inline void Row(const float* a, const float* b, const float* gamma, const float* beta, float epsilon, int64_t n,
                float* s, float* y) {
  Vec acc{};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Vec v = Load(a + j) + Load(b + j);
    Store(s + j, v);
    acc += v;
  }
  float total = LaneSum(acc);
  for (int64_t t = j; t < n; ++t) total += (s[t] = a[t] + b[t]);
  const float mean = total / static_cast<float>(n);
  const Vec vm = Splat(mean);
  Vec sq{};
  for (j = 0; j + kLanes <= n; j += kLanes) {
    const Vec d = Load(s + j) - vm;
    sq += d * d;
  }
  float var = LaneSum(sq);
  for (int64_t t = j; t < n; ++t) var += (s[t] - mean) * (s[t] - mean);
  const float inv = 1.f / std::sqrt(var / static_cast<float>(n) + epsilon);
  const Vec vi = Splat(inv);
  for (j = 0; j + kLanes <= n; j += kLanes) {
    Vec v = (Load(s + j) - vm) * vi * Load(gamma + j);
    if (beta) v += Load(beta + j);
    Store(y + j, v);
  }
  for (int64_t t = j; t < n; ++t) y[t] = (s[t] - mean) * inv * gamma[t] + (beta ? beta[t] : 0.f);
}

inline void Rows(const float* a, const float* b, const float* gamma, const float* beta, float epsilon, int64_t n,
                 int64_t rows, float* y, float* sum) {
  // Without a sum output, s lives in a row buffer of this call (a few KiB: stays in L1).
  constexpr int64_t kStack = 4096;
  float local[kStack];
  for (int64_t i = 0; i < rows; ++i) {
    float* s = sum ? sum + i * n : n <= kStack ? local : y + i * n;  // y as scratch: read before written
    Row(a + i * n, b + i * n, gamma, beta, epsilon, n, s, y + i * n);
  }
}

}  // namespace tandem::cpu::add_layer_norm::ADD_LN_ISA
