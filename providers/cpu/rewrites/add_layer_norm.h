// A residual Add read by a LayerNormalization over the last axis becomes one ai.tandem
// AddLayerNormalization(A, B, Scale, B) (kernels/nn/add_layer_norm.cc): each row is summed,
// normalized and written while in cache, instead of an Add's pass over the activations and
// the normalization's own (ONNX Runtime's SkipLayerNormalization does the same). The
// sum stays an output of the node where anything else reads it (pre-norm transformers: the
// residual stream goes on) or it is a graph output. Only float nodes on `provider`, an Add
// of two values of one static shape (no broadcast; equal symbols count as equal: a session
// refuses inputs that bind one symbol to two sizes), a LayerNormalization (opset 17,
// or ai.tandem from optimizer/layer_norm_fusion.h) whose axis is the last, whose Scale and
// B are constant vectors of the last dim's known size and whose Mean and InvStdDev are not
// named. The node
// takes the Add's place (its readers may come before the normalization's). Training graphs
// and every graph under TANDEM_CPU_ADD_LAYER_NORM=0 are left alone.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of Adds folded.
int FuseAddLayerNorm(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
