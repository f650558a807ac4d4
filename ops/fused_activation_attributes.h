// The attributes by which a fused ai.tandem node (FusedConv, FusedGemm, FusedMatMul and the
// CPU's rewrites that make such nodes) carries the activation it applies to its result:
// `activation` (the activation's op type: Relu, LeakyRelu, Clip, Sigmoid, Tanh; on the CPU
// only also HardSwish, HardSigmoid, Gelu, Mish: x * tanh(softplus(x)), and
// Swish: x * sigmoid(alpha * x), which SiLU is with alpha 1) with `activation_alpha` / `activation_beta` (LeakyRelu's,
// Swish's alpha; HardSigmoid's alpha and beta; Clip's bounds) and, for Gelu's tanh form,
// `activation_approximate` = "tanh". The kernels read them
// (providers/cpu/microkernels/fused_activation.h, the CUDA provider's fused launches).
#pragma once
#include "graph/graph.h"

namespace tandem {

// The activations a fusion may fold: those every provider's fused kernels apply (Relu,
// LeakyRelu, Clip, Sigmoid, Tanh), or also those only the CPU's apply (HardSwish,
// HardSigmoid, Mish, Gelu in either form; Swish and Mish are also what the
// activation fusion writes for the x * Sigmoid(x) and x * Tanh(Softplus(x)) patterns), for
// a graph the CPU runs alone.
enum class FusableActivations { kEveryProvider, kCpu };

// Sets the `activation` attributes on `fused` from activation node `act` (an ONNX op, or
// ai.tandem's Gelu) and returns true,
// or returns false when `act` cannot be fused (another op, one outside `fusable`, Clip
// bounds that are not constant float scalars, an ONNX Swish node). Used by the activation
// fusion (optimizer/activation_fusion.h) and by the rewrites that make a fused node later
// (providers/cpu/rewrites/matmul_bias.h).
bool DescribeFusedActivation(const Graph& graph, const Node& act, Node& fused, FusableActivations fusable);

// Sets the `activation` attributes on `fused`: op `activation` with `alpha` and `beta` (and
// no `activation_approximate`).
void SetFusedActivation(Node& fused, const std::string& activation, float alpha, float beta);

}  // namespace tandem
