// MatMul + bias on the CPU: `Y = MatMul(A, B)` followed by `Add(Y, bias)` (either operand
// order), where B is a constant 2-D float matrix [K, N] and bias a constant float [N],
// becomes one FusedMatMul(A, B, bias) writing the Add's output: oneDNN adds the
// bias while it writes Y, saving a pass over Y (PyTorch exports every nn.Linear on a
// rank-3 input this way — a transformer's projections and feed-forward layers). An
// activation that alone reads the sum (Relu, LeakyRelu, Clip with constant bounds, Sigmoid,
// Tanh: optimizer/activation_fusion.h, which cannot see past the Add) is folded too, as the
// FusedMatMul's `activation`, applied after the bias (a feed-forward layer's Relu).
// Only float nodes all assigned to `provider` are rewritten, and only when Y (and the sum,
// for the activation) has no other reader, is not a graph output and is not read by a
// subgraph. Training graphs are left alone (their gradient nodes read Y's shape).
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of nodes folded
// (Adds and activations).
int FuseMatMulBias(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
