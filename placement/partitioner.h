// Partitioner: assigns every node to an execution provider and inserts Copy nodes
// (domain ai.tandem, op Copy, attribute "to" = destination provider, "cpu" for the host)
// where a value crosses devices; each Copy runs on the device side of its edge (see
// framework/copy_kernel.h). Graph inputs and initializers start on the host.
//
// Placement, by PartitionOptions::policy:
//   kPreferenceOrder  the first provider in the user's order that has a kernel;
//   kLowestCost       the placement with the lowest estimated total: each node's
//                     Capability() on its provider plus CopyCostUs() for every value it
//                     would have to move (sizes from the value's static shape, 4 KiB
//                     when unknown). Candidates: node by node (the cheapest provider for
//                     each, given where its inputs already are), and the whole graph on
//                     each provider (nodes it lacks on the host) — so a small graph whose
//                     copies cost more than a device saves stays in one piece. Ties go
//                     to the earlier provider in the user's order. Symbolic dims take
//                     their values from options.dim_values (the sizes the caller feeds);
//                     constants and options.resident_inputs move once, not per run.
// Always, whatever the policy:
//   - shape arithmetic (Shape, Size, and nodes whose inputs and outputs are all integers)
//     runs on the host provider: it is tiny, and its results are read on the host;
//   - inputs a kernel reads on the host (KernelDef::host_inputs: shapes, axes, scalars)
//     are never copied to the device, and inputs read only for their dims
//     (KernelDef::metadata_inputs, any_device: Shape, Size, Copy) never move;
//   - nodes with subgraphs (If/Loop/Scan) and their bodies run on the host provider, and
//     the outer-scope values their bodies read are copied to the host first;
//   - graph outputs are copied back to the host unless options.outputs_on_host is false
//     (callers that keep results resident, e.g. the trainer's running statistics).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "graph/graph.h"

namespace tandem {

struct PartitionOptions {
  enum class Policy { kPreferenceOrder, kLowestCost };
  Policy policy = Policy::kPreferenceOrder;
  bool outputs_on_host = true;
  // kLowestCost: values of symbolic dims by name (e.g. {"batch", 128}) for the estimates
  // alone; the graph keeps its symbolic shapes. Dims left unknown count as cost_model.h says.
  std::map<std::string, int64_t> dim_values;
  // kLowestCost: graph inputs uploaded once to wherever their readers run (a trainer's
  // parameters and optimizer state): moving them costs nothing per run. Initializers
  // count the same way (a Copy moves a constant once).
  std::set<std::string> resident_inputs;
};

// kLowestCost: one node's estimates (microseconds, copies excluded) on each provider able
// to run it, in the user's order, and where it was placed.
struct NodeEstimate {
  std::string node, op, placed_on;
  std::vector<std::pair<std::string, double>> us;
};

struct PartitionResult {
  std::map<std::string, int> nodes_per_provider;
  int copies_inserted = 0;
  // kLowestCost: the chosen placement's estimated microseconds per run, and which
  // candidate it was ("node by node" or "all on <provider>"); every candidate's estimate
  // (copies included) in the order tried; and the per-node estimates of the top graph.
  double estimated_us = 0;
  std::string plan;
  std::vector<std::pair<std::string, double>> candidates;
  std::vector<NodeEstimate> node_estimates;
};

// What is statically known about `node` in `graph`, for capability queries and kernels.
KernelInfo DescribeNode(const Graph& graph, const Node& node, ExecutionProvider* provider);

// Sets node.provider for every node; fails naming the node when no provider can run it.
// `providers` must include a host (DeviceType::kCpu) provider when any other is present.
absl::StatusOr<PartitionResult> Partition(Graph& graph,
                                          const std::vector<ExecutionProvider*>& providers,
                                          const PartitionOptions& options = {});

}  // namespace tandem
