#include "optimizer/layer_norm_fusion.h"

#include <optional>
#include <set>

#include "graph/value_readers.h"
#include "ops/reduce_axes.h"

namespace tandem {
namespace {

class LayerNormMatcher {
 public:
  explicit LayerNormMatcher(const Graph& graph) : graph_(graph), readers_(graph) {}

  // The fused node for the pattern starting at ReduceMean node `k`, or nullopt; `used`
  // receives the indices of the pattern's nodes.
  std::optional<Node> Match(size_t k, std::set<size_t>& used) const {
    const Node& mean = graph_.nodes[k];
    if (!IsLastAxisMean(mean)) return std::nullopt;
    const std::string& x = mean.inputs[0];
    if (graph_.ValueType(x) != DataType::kFloat) return std::nullopt;
    const Node* sub = Sole(mean.outputs[0], "Sub");
    if (!sub || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) return std::nullopt;
    // d = x - m is read twice: squared, and divided by the deviation.
    const std::string& d = sub->outputs[0];
    const auto& d_readers = readers_.nodes(d);
    if (d_readers.size() != 2 || readers_.pinned(d)) return std::nullopt;
    const Node* pow = nullptr;
    const Node* div = nullptr;
    for (size_t r : d_readers) {
      const Node& n = graph_.nodes[r];
      if (n.domain.empty() && n.op_type == "Pow" && n.inputs.size() == 2 && n.inputs[0] == d)
        pow = &n;
      if (n.domain.empty() && n.op_type == "Div" && n.inputs.size() == 2 && n.inputs[0] == d)
        div = &n;
    }
    if (!pow || !div || ScalarConstant(pow->inputs[1]) != std::optional<float>(2.f))
      return std::nullopt;
    const Node* var = Sole(pow->outputs[0], "ReduceMean");
    if (!var || !IsLastAxisMean(*var)) return std::nullopt;
    const Node* add_eps = Sole(var->outputs[0], "Add");
    if (!add_eps) return std::nullopt;
    const std::string& eps_name =
        add_eps->inputs[0] == var->outputs[0] ? add_eps->inputs[1] : add_eps->inputs[0];
    const std::optional<float> eps = ScalarConstant(eps_name);
    const Node* sqrt = Sole(add_eps->outputs[0], "Sqrt");
    if (!eps || !sqrt || Sole(sqrt->outputs[0], "Div") != div || div->inputs[1] != sqrt->outputs[0])
      return std::nullopt;
    const Node* mul = Sole(div->outputs[0], "Mul");
    const std::string* gamma = mul ? OtherVectorInput(*mul, div->outputs[0]) : nullptr;
    if (!gamma) return std::nullopt;
    const Node* add_beta = Sole(mul->outputs[0], "Add");
    const std::string* beta = add_beta ? OtherVectorInput(*add_beta, mul->outputs[0]) : nullptr;
    const Node& last = beta ? *add_beta : *mul;

    for (const Node* n : {&mean, sub, pow, var, add_eps, sqrt, div, mul})
      used.insert(static_cast<size_t>(n - graph_.nodes.data()));
    if (beta) used.insert(static_cast<size_t>(add_beta - graph_.nodes.data()));
    Node f;
    f.name = (mean.name.empty() ? mean.op_type : mean.name) + "+LayerNorm";
    f.op_type = "LayerNormalization";
    f.domain = kTandemDomain;
    f.inputs = {x, *gamma};
    if (beta) f.inputs.push_back(*beta);
    f.outputs = {last.outputs[0]};
    f.attributes["axis"] = IntAttribute(-1);
    f.attributes["epsilon"] = FloatAttribute(*eps);
    return f;
  }

 private:
  // The node of type `op` that alone reads `value`, or null.
  const Node* Sole(const std::string& value, const char* op) const {
    const int r = readers_.Sole(value);
    if (r < 0) return nullptr;
    const Node& n = graph_.nodes[r];
    return n.domain.empty() && n.op_type == op && n.outputs.size() == 1 ? &n : nullptr;
  }

  std::optional<float> ScalarConstant(const std::string& name) const {
    auto it = graph_.initializers.find(name);
    if (it == graph_.initializers.end() || it->second.dtype() != DataType::kFloat ||
        it->second.numel() != 1)
      return std::nullopt;
    return it->second.data<float>()[0];
  }

  // For Mul/Add(value, c) in either order: c's name when it is a float constant vector.
  const std::string* OtherVectorInput(const Node& n, const std::string& value) const {
    if (n.inputs.size() != 2) return nullptr;
    const std::string& c = n.inputs[0] == value ? n.inputs[1] : n.inputs[0];
    auto it = graph_.initializers.find(c);
    return it != graph_.initializers.end() && it->second.dtype() == DataType::kFloat &&
                   it->second.rank() == 1
               ? &c
               : nullptr;
  }

  // ReduceMean over only the last axis, keepdims (axes an attribute, or input 1 from
  // opset 18 on).
  bool IsLastAxisMean(const Node& n) const {
    if (!n.domain.empty() || n.op_type != "ReduceMean" || !n.has_input(0) ||
        n.outputs.size() != 1 || n.attr_int("keepdims", 1) != 1)
      return false;
    const std::optional<std::vector<int64_t>> axes = ConstantReduceAxes(graph_, n);
    if (!axes || axes->size() != 1) return false;
    if ((*axes)[0] == -1) return true;
    const ValueInfo* vi = graph_.FindValueInfo(n.inputs[0]);
    return vi && vi->shape.rank_known &&
           (*axes)[0] == static_cast<int64_t>(vi->shape.dims.size()) - 1;
  }

  const Graph& graph_;
  ValueReaders readers_;
};

}  // namespace

int FuseLayerNorm(Graph& graph) {
  std::set<size_t> used;
  std::vector<std::pair<size_t, Node>> fused;  // index of the pattern's last node -> node
  {
    LayerNormMatcher matcher(graph);
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      if (used.count(k)) continue;
      std::set<size_t> pattern;
      auto f = matcher.Match(k, pattern);
      if (!f) continue;
      bool overlaps = false;
      for (size_t i : pattern) overlaps |= used.count(i) != 0;
      if (overlaps) continue;
      used.insert(pattern.begin(), pattern.end());
      fused.emplace_back(*pattern.rbegin(), std::move(*f));
    }
  }
  if (fused.empty()) return 0;
  // Each fused node takes the place of its pattern's last node (its inputs exist by then).
  std::map<size_t, Node> at;
  for (auto& [k, n] : fused) at.emplace(k, std::move(n));
  std::vector<Node> nodes;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    auto it = at.find(k);
    if (it != at.end()) nodes.push_back(std::move(it->second));
    else if (!used.count(k)) nodes.push_back(std::move(graph.nodes[k]));
  }
  graph.nodes = std::move(nodes);
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  return static_cast<int>(fused.size());
}

}  // namespace tandem
