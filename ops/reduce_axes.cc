#include "ops/reduce_axes.h"

namespace tandem {

std::optional<std::vector<int64_t>> ConstantReduceAxes(const Graph& graph, const Node& node) {
  if (!node.has_input(1)) return node.attr_ints("axes");
  auto it = graph.initializers.find(node.inputs[1]);
  if (it == graph.initializers.end()) return std::nullopt;
  return it->second.ToInt64Vector();
}

}  // namespace tandem
