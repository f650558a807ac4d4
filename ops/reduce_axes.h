// The axes of a Reduce* node (ReduceMean, ReduceSum, ...) as the graph states them, for the
// rewrites that recognise a reduction by its axes (optimizer/layer_norm_fusion.h,
// providers/cpu/rewrites/blocked_layout.h).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace tandem {

// Attribute `axes` (ReduceSum before opset 13, the others before 18), or input 1 when it is
// an initializer. nullopt when input 1 is computed while running; an empty vector when the
// node names no axes (all of them, or none with noop_with_empty_axes). Negative axes are
// returned as written.
std::optional<std::vector<int64_t>> ConstantReduceAxes(const Graph& graph, const Node& node);

}  // namespace tandem
