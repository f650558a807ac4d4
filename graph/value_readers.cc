#include "graph/value_readers.h"

namespace tandem {

std::map<std::string, size_t> Producers(const Graph& graph) {
  std::map<std::string, size_t> producers;
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    for (const std::string& o : graph.nodes[k].outputs)
      if (!o.empty()) producers[o] = k;
  return producers;
}

ValueReaders::ValueReaders(const Graph& graph) {
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const Node& n = graph.nodes[k];
    for (const std::string& in : n.inputs)
      if (!in.empty()) nodes_[in].push_back(k);
    for (const auto& [key, a] : n.attributes)
      if (a.kind == Attribute::Kind::kGraph && a.g)
        for (const std::string& name : a.g->outer_scope_names) pinned_.insert(name);
  }
  for (const ValueInfo& o : graph.outputs) pinned_.insert(o.name);
}

const std::vector<size_t>& ValueReaders::nodes(const std::string& value) const {
  static const std::vector<size_t> kNone;
  auto it = nodes_.find(value);
  return it == nodes_.end() ? kNone : it->second;
}

int ValueReaders::Sole(const std::string& value) const {
  const auto& r = nodes(value);
  return r.size() == 1 && !pinned(value) ? static_cast<int>(r[0]) : -1;
}

}  // namespace tandem
