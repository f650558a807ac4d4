// The CPU provider's rewrites read float32 initializers (a bias, a GroupNorm's affine part)
// through this one lookup.
#pragma once
#include <string>

#include "graph/graph.h"

namespace tandem::cpu {

// The float32 initializer `name`, or null when there is none or it has another type.
inline const Tensor* FloatConstant(const Graph& g, const std::string& name) {
  auto it = g.initializers.find(name);
  return it != g.initializers.end() && it->second.dtype() == DataType::kFloat ? &it->second : nullptr;
}

}  // namespace tandem::cpu
