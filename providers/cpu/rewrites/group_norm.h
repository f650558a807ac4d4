// GroupNorm on the CPU as one node. PyTorch's exporters write nn.GroupNorm(G, C) of
// x [N, C, spatial...] as Reshape(x) to [N, G, ...], InstanceNormalization with unit scale
// and zero bias of G, Reshape back to x's shape, Mul by the per-channel weight and Add of
// the bias ([C, 1, ...] constants), and a diffusion UNet or VAE then applies SiLU as
// Sigmoid and Mul. The Reshapes are recognized by the inferred static shapes, or where
// inference left them open (the TorchScript exporter's UNet), by their targets: the
// constant [0 or N, G, -1] and Shape(x); x's channels must be known. These nodes (each value read by the next alone, none a graph output,
// all assigned to `provider`) become one ai.tandem FusedGroupNorm (ops/tandem_ops.cc) of x,
// the weight and the bias, with activation = "Swish" when x * Sigmoid(x) follows; the Mul
// and the Add may each be absent (a weight of ones, a bias of zeros). The blocked-layout
// pass can then keep the convolutions' blocked maps through it (blocked_layout.h), where
// the Reshapes made it convert them back. Training graphs are left alone.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of FusedGroupNorm
// nodes written.
int FuseGroupNorm(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
