#include "optimizer/constant_folding.h"

#include <set>

#include "framework/kernel_guard.h"
#include "placement/partitioner.h"

namespace tandem {

namespace {
bool Foldable(const Node& node) {
  static const std::set<std::string> kNondeterministic = {
      "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Bernoulli",
      "Multinomial", "Dropout"};
  if (!node.domain.empty() || kNondeterministic.count(node.op_type)) return false;
  for (const auto& [k, a] : node.attributes)
    if (a.kind == Attribute::Kind::kGraph) return false;
  return true;
}
}  // namespace

absl::StatusOr<int> FoldConstants(Graph& graph, ExecutionProvider& cpu, int64_t max_growth_bytes) {
  int folded = 0;
  std::vector<Node> kept;
  for (Node& node : graph.nodes) {
    bool all_const = Foldable(node) && !node.inputs.empty();
    for (const std::string& in : node.inputs)
      if (!in.empty() && !graph.initializers.count(in)) all_const = false;
    if (!all_const) {
      kept.push_back(std::move(node));
      continue;
    }
    KernelInfo info = DescribeNode(graph, node, &cpu);
    auto kernel = cpu.MakeKernel(info);
    if (!kernel.ok()) {
      kept.push_back(std::move(node));
      continue;
    }
    std::vector<const Tensor*> inputs;
    for (const std::string& in : node.inputs)
      inputs.push_back(in.empty() ? nullptr : &graph.initializers.at(in));
    std::vector<Tensor> outputs(node.outputs.size());
    std::vector<bool> wanted;
    for (const std::string& o : node.outputs) wanted.push_back(!o.empty());
    KernelContext ctx(inputs, &outputs, wanted, &cpu.allocator(), 1);
    if (!ComputeCatching(**kernel, ctx).ok()) {  // e.g. too big: left for run time to report
      kept.push_back(std::move(node));
      continue;
    }
    bool complete = true;
    int64_t growth = 0;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (wanted[i] && !outputs[i].defined()) complete = false;
      if (wanted[i] && outputs[i].defined()) growth += static_cast<int64_t>(outputs[i].bytes());
    }
    for (const Tensor* in : inputs)
      if (in) growth -= static_cast<int64_t>(in->bytes());
    if (!complete || (max_growth_bytes >= 0 && growth > max_growth_bytes)) {
      kept.push_back(std::move(node));
      continue;
    }
    bool from_constants = true;  // no trainable parameter among the inputs
    for (const std::string& in : node.inputs)
      if (!in.empty() && IsFloatingPoint(graph.initializers.at(in).dtype()) && !graph.constants.count(in))
        from_constants = false;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (wanted[i]) {
        graph.initializers[node.outputs[i]] = outputs[i].Clone();
        if (from_constants) graph.constants.insert(node.outputs[i]);
      }
    ++folded;
  }
  graph.nodes = std::move(kept);
  return folded;
}

}  // namespace tandem
