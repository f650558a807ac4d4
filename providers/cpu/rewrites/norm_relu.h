// BatchNormalization + Relu on the CPU: an inference BatchNormalization whose output only
// a Relu reads (pre-activation networks such as densenet121 normalize and rectify every
// concatenation this way) takes the Relu as attribute activation = "Relu", so the kernel
// writes max(x * a + b, 0) in its one pass and the Relu's pass over the tensor is gone.
// Both nodes must be assigned to `provider`; the BatchNormalization's output must have no
// other reader, not be a graph output and not be read by a subgraph. Training graphs are
// left alone.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// Rewrites `graph` (partitioned, in execution order); returns the number of Relus folded.
int FuseBatchNormRelu(Graph& graph, const std::string& provider);

}  // namespace tandem::cpu
