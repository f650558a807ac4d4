// Partitioner: assigns every node to an execution provider and inserts Copy nodes
// (domain ai.tandem, op Copy, attribute "to" = provider name) where a value crosses
// devices. Providers come in the user's order of preference; among those that can run
// a node, the lowest estimated cost wins, ties going to the earlier provider. Graph
// inputs and initializers start on the host; graph outputs are copied back to it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "providers/execution_provider.h"

namespace tandem {

constexpr char kTandemDomain[] = "ai.tandem";

struct PartitionResult {
  std::map<std::string, int> nodes_per_provider;
  int copies_inserted = 0;
};

// What is statically known about `node` in `graph`, for capability queries and kernels.
KernelInfo DescribeNode(const Graph& graph, const Node& node, ExecutionProvider* provider);

// Sets node.provider for every node; fails naming the node when no provider can run it.
absl::StatusOr<PartitionResult> Partition(Graph& graph,
                                          const std::vector<ExecutionProvider*>& providers);

}  // namespace tandem
