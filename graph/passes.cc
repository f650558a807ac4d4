#include "graph/passes.h"

#include <set>

namespace tandem {

std::string UnusedValueName(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int i = 1; graph.initializers.count(name) || graph.value_info.count(name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

int EliminateDeadCode(Graph& graph) {
  std::set<std::string> live;
  for (const ValueInfo& o : graph.outputs) live.insert(o.name);
  std::vector<bool> keep(graph.nodes.size(), false);
  // Nodes are in topological order: walk backwards.
  for (size_t k = graph.nodes.size(); k-- > 0;) {
    const Node& n = graph.nodes[k];
    bool used = false;
    for (const std::string& o : n.outputs)
      if (!o.empty() && live.count(o)) used = true;
    if (!used) continue;
    keep[k] = true;
    for (const std::string& i : n.inputs)
      if (!i.empty()) live.insert(i);
    for (const auto& [key, a] : n.attributes)
      if (a.kind == Attribute::Kind::kGraph && a.g)
        live.insert(a.g->outer_scope_names.begin(), a.g->outer_scope_names.end());
  }
  std::vector<Node> kept;
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    if (keep[k]) kept.push_back(std::move(graph.nodes[k]));
  int removed = static_cast<int>(graph.nodes.size() - kept.size());
  graph.nodes = std::move(kept);
  for (auto it = graph.initializers.begin(); it != graph.initializers.end();)
    it = live.count(it->first) ? std::next(it) : graph.initializers.erase(it);
  return removed;
}

void RemoveNodes(Graph& graph, const std::set<size_t>& indices) {
  if (indices.empty()) return;
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size() - indices.size());
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    if (!indices.count(k)) kept.push_back(std::move(graph.nodes[k]));
  graph.nodes = std::move(kept);
}

}  // namespace tandem
