// GELU fusion: exporters before ONNX opset 20 (and models that spell GELU out, GPT-2's
// "gelu_new") write it as 5 to 9 element-wise nodes around an Erf or a Tanh, e.g.
//   Mul(Mul(x, Add(Erf(Div(x, 1.4142)), 1)), 0.5)                           (erf form)
//   Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)), 0.7979)), 1))  (tanh form)
// each a full pass over the activations. The pass takes every Erf or Tanh, gathers the
// element-wise nodes around it (Add, Sub, Mul, Div, Pow, Neg, Tanh, Erf whose other
// operands are float scalar constants) that compute from one value x, and extends the
// result along its sole readers while the whole still computes from x alone. The
// largest such subgraph that evaluates, in double at 25 points of [-6, 6], to
// x * Phi(x) (erf) or its tanh approximation within 1e-6 of the result's scale becomes
// one Gelu (domain ai.tandem: the opset-20 op's kernel, approximate "none" or "tanh"),
// whatever order or grouping the exporter chose. Every intermediate value must have no
// reader outside the subgraph, nor be a graph output.
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of GELUs fused. Runs after constant folding, before the activation
// fusion (which folds an ai.tandem Gelu into the product that feeds it, on the CPU).
int FuseGelu(Graph& graph);

}  // namespace tandem
