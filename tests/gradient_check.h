// Finite-difference check of gradient rules: one node under test, float64 inputs, the
// loss sum(Y * c) with a fixed pseudo-random c; every input gradient the rule produces is
// compared with central differences (h = 1e-6).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tandem::testing {

struct GradCase {
  std::string op;
  std::string domain;                      // "" = ai.onnx
  int opset = 17;
  std::vector<Tensor> inputs;              // float64 (or other types for non-differentiable inputs)
  std::vector<bool> differentiate;         // which inputs to check; empty = every float64 input
  std::map<std::string, Attribute> attributes;
  int num_outputs = 1;                     // outputs of the node
  int loss_output = 0;                     // which output feeds the loss
  double tolerance = 1e-5;                 // relative (plus 1e-7 absolute)
};

// Runs the check; returns "" when every gradient matches, else a description.
std::string CheckGradients(const GradCase& c);

// Deterministic test data: values in [lo, hi).
Tensor RandomDoubles(const Dims& dims, unsigned seed, double lo = -1.0, double hi = 1.0);

Attribute IntAttr(int64_t v);
Attribute IntsAttr(std::vector<int64_t> v);
Attribute FloatAttr(float v);
Attribute StringAttr(std::string v);

}  // namespace tandem::testing
