// Constant folding: evaluates, once at load time, every node whose inputs are all
// initializers (deterministic ops only, no subgraphs) on the CPU provider and replaces it
// with initializers holding its outputs.
#pragma once
#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "providers/execution_provider.h"

namespace tandem {

// Returns the number of nodes folded. Nodes whose kernel fails are left in place (the
// error then surfaces at run time, where it names the node).
absl::StatusOr<int> FoldConstants(Graph& graph, ExecutionProvider& cpu);

}  // namespace tandem
