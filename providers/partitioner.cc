#include "providers/partitioner.h"

#include <limits>

namespace tandem {

KernelInfo DescribeNode(const Graph& graph, const Node& node, ExecutionProvider* provider) {
  KernelInfo info{node};
  info.opset = graph.opset(node.domain);
  info.provider = provider;
  for (const std::string& in : node.inputs) {
    info.input_types.push_back(in.empty() ? DataType::kUndefined : graph.ValueType(in));
    auto it = in.empty() ? graph.initializers.end() : graph.initializers.find(in);
    info.constant_inputs.push_back(it == graph.initializers.end() ? nullptr : &it->second);
  }
  for (const std::string& out : node.outputs)
    info.output_types.push_back(out.empty() ? DataType::kUndefined : graph.ValueType(out));
  return info;
}

absl::StatusOr<PartitionResult> Partition(Graph& graph,
                                          const std::vector<ExecutionProvider*>& providers) {
  if (providers.empty()) return absl::InvalidArgumentError("[partition] no execution providers");
  PartitionResult result;
  std::map<std::string, Device> value_device;  // where each value lives
  std::map<std::pair<std::string, std::string>, std::string> copies;  // (value, provider)
  const Device host{DeviceType::kCpu, 0};

  std::vector<Node> out_nodes;
  for (Node& node : graph.nodes) {
    if (node.domain == kTandemDomain && node.op_type == "Copy") {
      out_nodes.push_back(std::move(node));
      continue;
    }
    ExecutionProvider* best = nullptr;
    double best_cost = std::numeric_limits<double>::infinity();
    std::string reasons;
    for (ExecutionProvider* p : providers) {
      KernelInfo info = DescribeNode(graph, node, p);
      auto cost = p->Capability(info);
      if (!cost) {
        reasons += (reasons.empty() ? "" : "; ") +
                   p->registry().ExplainMiss(node.domain, node.op_type, info.opset,
                                             KernelLookupType(p->registry(), info));
        continue;
      }
      if (*cost < best_cost) {
        best = p;
        best_cost = *cost;
      }
    }
    if (!best)
      return absl::UnimplementedError("[partition] " + node.Describe() + ": no provider can run it (" +
                                      reasons + ")");
    node.provider = best->name();
    ++result.nodes_per_provider[best->name()];
    // Subgraph bodies (If/Loop/Scan/SequenceMap) are partitioned the same way.
    for (auto& [key, a] : node.attributes) {
      if (a.kind != Attribute::Kind::kGraph || !a.g) continue;
      auto sub = Partition(*a.g, providers);
      if (!sub.ok()) return sub.status();
      for (const auto& [p, n] : sub->nodes_per_provider) result.nodes_per_provider[p] += n;
      result.copies_inserted += sub->copies_inserted;
    }
    // Device edges: copy inputs that live elsewhere.
    for (std::string& in : node.inputs) {
      if (in.empty()) continue;
      auto it = value_device.find(in);
      Device src = it == value_device.end() ? host : it->second;
      if (src == best->device()) continue;
      auto done = copies.find({in, best->name()});
      if (done != copies.end()) {
        in = done->second;
        continue;
      }
      Node copy;
      copy.op_type = "Copy";
      copy.domain = kTandemDomain;
      copy.name = in + "/copy_to_" + best->name();
      copy.inputs = {in};
      copy.outputs = {copy.name};
      copy.attributes["to"] = StringAttribute(best->name());
      copy.provider = best->name();
      value_device[copy.name] = best->device();
      copies[{in, best->name()}] = copy.name;
      in = copy.name;
      out_nodes.push_back(std::move(copy));
      ++result.copies_inserted;
    }
    for (const std::string& o : node.outputs)
      if (!o.empty()) value_device[o] = best->device();
    out_nodes.push_back(std::move(node));
  }
  graph.nodes = std::move(out_nodes);
  if (graph.opsets.find(kTandemDomain) == graph.opsets.end() && result.copies_inserted)
    graph.opsets[kTandemDomain] = 1;
  return result;
}

}  // namespace tandem
