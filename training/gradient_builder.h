// Reverse-mode differentiation as a graph rewrite: appends to a graph the nodes that
// compute d(loss)/d(w) for the requested values w, using one GradientRule per op.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem::training {

// `loss` names a value of `graph` (any shape: its gradient seed is all ones). Returns
// w -> name of its gradient value, for every w in `wrt` that the loss depends on (a w the
// loss does not depend on is absent from the map). Errors name the node and op that
// has no gradient rule. The appended nodes are in a valid execution order.
absl::StatusOr<std::map<std::string, std::string>> AddGradients(
    Graph& graph, const std::string& loss, const std::vector<std::string>& wrt);

}  // namespace tandem::training
