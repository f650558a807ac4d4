// Graph passes that need no kernels. (Constant folding runs kernels, so it lives in
// optimizer/constant_folding.h.)
#pragma once
#include "graph/graph.h"

namespace tandem {

// Removes nodes none of whose outputs reach a graph output (or a subgraph's outer-scope
// use), then initializers nothing reads. Returns the number of nodes removed.
int EliminateDeadCode(Graph& graph);

}  // namespace tandem
