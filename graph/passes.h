// Graph passes that need no kernels. (Constant folding runs kernels, so it lives in
// optimizer/constant_folding.h.)
#pragma once
#include <set>
#include <string>

#include "graph/graph.h"

namespace tandem {

// Removes nodes none of whose outputs reach a graph output (or a subgraph's outer-scope
// use), then initializers nothing reads. Returns the number of nodes removed.
int EliminateDeadCode(Graph& graph);

// Removes the nodes at `indices` (the others keep their order): what a fusion pass that
// folded nodes into others does last.
void RemoveNodes(Graph& graph, const std::set<size_t>& indices);

// `base`, or `base_1`, `base_2`, ...: the first that names no initializer and no typed value
// of the graph, for a value a provider's rewrite adds (the Session's own rewrites also look
// into subgraphs: optimizer/onnx_rewrites/rewrite_util.h FreshName).
std::string UnusedValueName(const Graph& graph, const std::string& base);

}  // namespace tandem
