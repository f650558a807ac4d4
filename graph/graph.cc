#include "graph/graph.h"

#include <deque>
#include <set>
#include <unordered_map>

namespace tandem {

bool Graph::HasGradientNodes() const {
  for (const Node& n : nodes)
    if (n.domain == "ai.tandem" && n.op_type.size() > 4 &&
        n.op_type.compare(n.op_type.size() - 4, 4, "Grad") == 0)
      return true;
  return false;
}

int Graph::opset(const std::string& domain) const {
  auto it = opsets.find(domain == "ai.onnx" ? "" : domain);
  return it == opsets.end() ? 0 : it->second;
}

const ValueInfo* Graph::FindValueInfo(const std::string& value) const {
  for (const ValueInfo& v : inputs)
    if (v.name == value) return &v;
  for (const ValueInfo& v : outputs)
    if (v.name == value) return &v;
  auto it = value_info.find(value);
  return it == value_info.end() ? nullptr : &it->second;
}

DataType Graph::ValueType(const std::string& value) const {
  auto init = initializers.find(value);
  if (init != initializers.end()) return init->second.dtype();
  const ValueInfo* vi = FindValueInfo(value);
  return vi ? vi->dtype : DataType::kUndefined;
}

absl::StatusOr<std::vector<size_t>> Graph::TopologicalOrder() const {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& out : nodes[i].outputs)
      if (!out.empty()) producer[out] = i;
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<size_t> deps;
    for (const std::string& in : nodes[i].inputs) {
      auto it = in.empty() ? producer.end() : producer.find(in);
      if (it != producer.end()) deps.insert(it->second);
    }
    // Subgraph bodies may read values of this graph implicitly.
    for (const auto& [key, attr] : nodes[i].attributes) {
      if (attr.kind != Attribute::Kind::kGraph || !attr.g) continue;
      for (const std::string& name : attr.g->outer_scope_names) {
        auto it = producer.find(name);
        if (it != producer.end() && it->second != i) deps.insert(it->second);
      }
    }
    pending[i] = static_cast<int>(deps.size());
    for (size_t d : deps) consumers[d].push_back(i);
  }
  std::deque<size_t> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (size_t c : consumers[n])
      if (--pending[c] == 0) ready.push_back(c);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0)
        return absl::InvalidArgumentError("graph '" + name + "' has a cycle through " +
                                          nodes[i].Describe());
  }
  return order;
}

absl::Status Graph::SortTopologically() {
  auto order = TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (size_t i : *order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
  return absl::OkStatus();
}

absl::Status Graph::Validate() const {
  std::set<std::string> known(outer_scope_names.begin(), outer_scope_names.end());
  for (const ValueInfo& v : inputs) known.insert(v.name);
  for (const auto& [n, t] : initializers) known.insert(n);
  std::set<std::string> produced;
  for (const Node& node : nodes)
    for (const std::string& out : node.outputs) {
      if (out.empty()) continue;
      if (!produced.insert(out).second || (known.count(out) && !initializers.count(out)))
        return absl::InvalidArgumentError(node.Describe() + ": output '" + out +
                                          "' is already defined elsewhere in the graph");
    }
  for (const Node& node : nodes)
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& in = node.inputs[i];
      if (!in.empty() && !known.count(in) && !produced.count(in))
        return absl::InvalidArgumentError(node.Describe() + ": input " + std::to_string(i) +
                                          " '" + in + "' is not produced by any node, graph "
                                          "input or initializer");
    }
  for (const ValueInfo& out : outputs)
    if (!known.count(out.name) && !produced.count(out.name))
      return absl::InvalidArgumentError("graph output '" + out.name + "' is never produced");
  return absl::OkStatus();
}

}  // namespace tandem
