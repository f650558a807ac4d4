#include "graph/rewrites/rewrite_util.h"

#include <vector>

namespace tandem::rewrite {

const Tensor* Constant(const Graph& graph, const std::string& value) {
  auto it = graph.initializers.find(value);
  return it == graph.initializers.end() ? nullptr : &it->second;
}

const Shape* KnownShape(const Graph& graph, const std::string& value) {
  const ValueInfo* info = graph.FindValueInfo(value);
  return info && info->kind == ValueKind::kTensor && info->shape.rank_known ? &info->shape : nullptr;
}

std::string FreshName(const Graph& graph, const std::string& base) {
  std::set<std::string> used;
  for (const ValueInfo& v : graph.inputs) used.insert(v.name);
  for (const auto& [name, t] : graph.initializers) used.insert(name);
  for (const Node& n : graph.nodes)
    for (const std::string& o : n.outputs) used.insert(o);
  for (const std::string& o : graph.outer_scope_names) used.insert(o);
  std::string name = base;
  for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

std::map<std::string, size_t> Producers(const Graph& graph) {
  std::map<std::string, size_t> producers;
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    for (const std::string& o : graph.nodes[k].outputs)
      if (!o.empty()) producers[o] = k;
  return producers;
}

void RedirectReads(Graph& graph, const std::string& from, const std::string& to) {
  for (Node& n : graph.nodes)
    for (std::string& in : n.inputs)
      if (in == from) in = to;
}

void RemoveNodes(Graph& graph, const std::set<size_t>& indices) {
  if (indices.empty()) return;
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size() - indices.size());
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    if (!indices.count(k)) kept.push_back(std::move(graph.nodes[k]));
  graph.nodes = std::move(kept);
}

}  // namespace tandem::rewrite
