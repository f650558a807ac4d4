// Constant folding: evaluates, once at load time, every node whose inputs are all
// initializers (deterministic ops only, no subgraphs) on the CPU provider and replaces it
// with initializers holding its outputs.
#pragma once
#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "graph/graph.h"

namespace tandem {

// Returns the number of nodes folded. Nodes whose kernel fails are left in place (the
// error then surfaces at run time, where it names the node). A folded value joins
// Graph::constants (not trainable) when every floating-point initializer it was computed
// from is one. With `max_growth_bytes` >= 0, a node whose outputs would take more than
// that many bytes beyond its inputs (ConstantOfShape, Expand, Tile, Range ...) is left in
// place, so a written model does not swell.
absl::StatusOr<int> FoldConstants(Graph& graph, ExecutionProvider& cpu, int64_t max_growth_bytes = -1);

}  // namespace tandem
