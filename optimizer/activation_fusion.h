// Operator fusion: rewrites Conv / Gemm / MatMul followed by an activation (Relu,
// LeakyRelu, Clip with constant bounds, Sigmoid, Tanh, and — see `fusable` below —
// HardSwish (the op, or x * HardSigmoid(x) with alpha 1/6, beta 0.5), HardSigmoid, Gelu's
// erf form, Mish (the op, or x * Tanh(Softplus(x))) and SiLU written as x * Sigmoid(x),
// which becomes activation Swish with alpha 1) into one node of domain ai.tandem
// — FusedConv / FusedGemm / FusedMatMul — that keeps the producer's inputs and
// attributes and adds `activation` (the activation's op type) plus `activation_alpha` /
// `activation_beta`. A Conv (+ activation) followed by a 2x2 stride-2 unpadded MaxPool
// also takes the pool (attribute pool = "MaxPool2x2"). The CPU kernels apply the
// activation as a oneDNN post-op and pool straight from the convolution's blocked
// result, saving passes over the largest tensors. A value is fused away only when it is
// float32, has exactly one reader (SiLU's x: the Sigmoid and the Mul; a spelled-out
// Mish's or HardSwish's x: the gate's first node and the Mul), is not a graph output and is not read by a subgraph.
// In training graphs, ReluGrad(G(dY, X, ...):0, X) with G = MaxPoolGrad / ConvGrad /
// ConvTransposeGrad becomes G with relu_mask = 1 (the mask is applied while dX is
// written, saving a pass over the activation's gradient).
// The fused node is named "<producer>+<activation>[+<pool>]" so profiles still point at
// every original node. An activation after a Gemm or MatMul whose sole reader is a Reshape
// (GPT-2's Conv1D: Reshape, Gemm, Reshape, GELU) moves into the product, the Reshape then
// writing the activation's output.
#pragma once
#include "graph/graph.h"
#include "ops/fused_activation_attributes.h"

namespace tandem {

// Returns the number of fusions made. Runs after constant folding, before partitioning.
// `fusable`: kCpu also fuses the activations only the CPU's kernels apply (HardSwish,
// HardSigmoid, Gelu, Mish, SiLU) — a session that may place nodes on another provider passes
// kEveryProvider, so that a GPU keeps its convolutions and runs those activations itself.
int FuseActivations(Graph& graph, FusableActivations fusable);

}  // namespace tandem
