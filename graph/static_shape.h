// Static shapes of a graph's values, as shape inference recorded them, for rewrites that
// must know a value's shape before anything runs.
#pragma once
#include <optional>
#include <string>

#include "graph/graph.h"

namespace tandem {

// Both values have the same static shape: the same rank, each dimension known and equal or
// the same symbol.
bool SameStaticShape(const Graph& graph, const std::string& a, const std::string& b);

// The value's dims when every one is known, else nullopt: an initializer's, or as shape
// inference recorded them (as Graph::ValueType, the initializer first).
std::optional<Dims> StaticDims(const Graph& graph, const std::string& value);

}  // namespace tandem
