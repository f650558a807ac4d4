// Graph passes that need no kernels. (Constant folding runs kernels, so it lives in
// optimizer/constant_folding.h.)
#pragma once
#include <set>

#include "graph/graph.h"

namespace tandem {

// Removes nodes none of whose outputs reach a graph output (or a subgraph's outer-scope
// use), then initializers nothing reads. Returns the number of nodes removed.
int EliminateDeadCode(Graph& graph);

// Removes the nodes at `indices` (the others keep their order): what a fusion pass that
// folded nodes into others does last.
void RemoveNodes(Graph& graph, const std::set<size_t>& indices);

}  // namespace tandem
