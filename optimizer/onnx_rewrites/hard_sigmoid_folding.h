// HardSigmoid spelled out, as tf2onnx writes Keras's hard_sigmoid and the gate of its
// hard_swish: Clip(x + 3, 0, 6) * (1/6) (or / 6; the 3 on either side of the Add, the
// Clip's bounds constant inputs or, before opset 11, attributes) becomes one
// HardSigmoid(x, alpha = 1/6, beta = 0.5), which computes the same clip(x / 6 + 0.5, 0, 1).
// Only when the Add's and the Clip's outputs have the next node as their one reader and are
// neither graph outputs nor read by a subgraph; the HardSigmoid writes the last node's output.
// Activation fusion then takes x * HardSigmoid(x) as HardSwish (activation_fusion.h).
#pragma once
#include "graph/graph.h"

namespace tandem {

// Returns the number of chains rewritten (each removes two nodes).
int FoldSpelledOutHardSigmoids(Graph& graph);

}  // namespace tandem
