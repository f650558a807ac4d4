#include "cli/lib/convert/weight_storage.h"

#include <vector>

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem::convert {

int StoreWeightsAs(Graph& graph, DataType to, int64_t min_elements) {
  std::vector<std::string> names;
  for (const auto& [name, t] : graph.initializers)
    if (t.dtype() == DataType::kFloat && t.numel() >= min_elements) names.push_back(name);
  std::vector<Node> casts;
  const char* suffix = to == DataType::kFloat16 ? ".fp16" : ".bf16";
  for (const std::string& name : names) {
    const std::string stored = rewrite::FreshName(graph, name + suffix);
    graph.initializers[stored] = graph.initializers.at(name).CastTo(to);
    graph.initializers.erase(name);
    if (graph.constants.erase(name)) graph.constants.insert(stored);
    Node cast;
    cast.name = stored + ".to_float";
    cast.op_type = "Cast";
    cast.inputs = {stored};
    cast.outputs = {name};
    cast.attributes["to"] = IntAttribute(static_cast<int64_t>(DataType::kFloat));
    casts.push_back(std::move(cast));
  }
  graph.nodes.insert(graph.nodes.begin(), casts.begin(), casts.end());
  return static_cast<int>(names.size());
}

}  // namespace tandem::convert
