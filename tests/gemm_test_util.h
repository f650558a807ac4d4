// For tests of float32 matrix products: seeded inputs, a float64 reference (y = alpha A B' +
// beta bias summed in double with each element's magnitude) and a comparison judged
// against that magnitude (the bound float32 rounding obeys); CPU sessions of a graph or one node.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/session.h"

namespace tandem {

inline std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// y = alpha * A B' + beta * bias in float64, and per element the scale of its terms
// (sum of |a||b| and |bias|), which bounds float32 rounding.
inline void GemmReference(const std::vector<float>& a, const std::vector<float>& b, bool trans_b, const float* bias,
                          int64_t m, int64_t k, int64_t n, double alpha, double beta, std::vector<double>* y,
                          std::vector<double>* scale) {
  y->assign(m * n, 0.0);
  scale->assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double bv = trans_b ? b[j * k + kk] : b[kk * n + j];
        sum += a[i * k + kk] * bv;
        mag += std::fabs(a[i * k + kk] * bv);
      }
      (*y)[i * n + j] = alpha * sum + (bias ? beta * bias[j] : 0.0);
      (*scale)[i * n + j] = std::fabs(alpha) * mag + (bias ? std::fabs(beta * bias[j]) : 0.0);
    }
}

inline void ExpectClose(const float* got, const std::vector<double>& want, const std::vector<double>& scale,
                        const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), 1e-5 * scale[i] + 1e-30) << what << " element " << i;
}

// FusedMatMul(x, w, b) with Relu, output "y".
inline Node FusedMatMulReluNode() {
  Node mm;
  mm.name = "mm";
  mm.domain = kTandemDomain;
  mm.op_type = "FusedMatMul";
  mm.inputs = {"x", "w", "b"};
  mm.outputs = {"y"};
  mm.attributes["activation"] = StringAttribute("Relu");
  return mm;
}

// A session of `g` on the CPU provider with 2 threads (null after a failed expectation).
inline std::unique_ptr<Session> CpuSession(const Graph& g) {
  SessionOptions o;
  o.providers = {"cpu"};
  o.num_threads = 2;
  auto s = Session::FromGraph(g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// A CpuSession of `node` alone, output "y".
inline std::unique_ptr<Session> OneNodeCpuSession(const Node& node, const std::vector<ValueInfo>& inputs,
                                                  std::map<std::string, Tensor> initializers) {
  Graph g;
  g.name = node.op_type;
  g.opsets[""] = 13;
  g.opsets[kTandemDomain] = 1;
  g.inputs = inputs;
  g.initializers = std::move(initializers);
  g.nodes.push_back(node);
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Unknown()});
  return CpuSession(g);
}

}  // namespace tandem
