#include "training/gradient_builder.h"

#include <set>

#include "training/gradient_rules.h"

namespace tandem::training {

namespace {

// Whether `out`, an output of `n`, can carry a gradient: a floating-point value (or one of
// unknown type) that is not an index, shape or truth value. Values computed only from
// shapes of parameter-dependent tensors (an LSTM's zero initial state expanded to the
// batch size) so do not make their consumers need a gradient rule.
bool Differentiable(const Graph& graph, const Node& n, const std::string& out) {
  static const std::set<std::string> kDiscrete = {
      "Shape", "Size", "ArgMax", "ArgMin", "NonZero", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf"};
  if (n.domain.empty() && kDiscrete.count(n.op_type)) return false;
  const DataType t = graph.ValueType(out);
  return t == DataType::kUndefined || IsFloatingPoint(t);
}

// Sums the contributions to one gradient (emitting a Sum node when there are several).
std::string Accumulate(GradientContext& ctx, const std::vector<std::string>& parts) {
  if (parts.empty()) return "";
  if (parts.size() == 1) return parts[0];
  return ctx.Emit1("Sum", parts);
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> AddGradients(
    Graph& graph, const std::string& loss, const std::vector<std::string>& wrt) {
  auto sorted = graph.SortTopologically();
  if (!sorted.ok()) return sorted;
  // Values that depend on some w (forward), and nodes that lead to the loss (backward).
  std::set<std::string> depends(wrt.begin(), wrt.end());
  for (const Node& n : graph.nodes) {
    bool any = false;
    for (const std::string& in : n.inputs) any |= !in.empty() && depends.count(in);
    if (any)
      for (const std::string& out : n.outputs)
        if (!out.empty() && Differentiable(graph, n, out)) depends.insert(out);
  }
  bool loss_known = depends.count(loss) || graph.initializers.count(loss);
  for (const Node& n : graph.nodes)
    for (const std::string& out : n.outputs) loss_known |= out == loss;
  for (const ValueInfo& in : graph.inputs) loss_known |= in.name == loss;
  if (!loss_known) return absl::InvalidArgumentError("[autograd] loss value '" + loss + "' is not in the graph");

  std::set<std::string> reaches_loss = {loss};
  std::vector<size_t> relevant;
  for (size_t k = graph.nodes.size(); k-- > 0;) {
    const Node& n = graph.nodes[k];
    bool leads = false;
    for (const std::string& out : n.outputs) leads |= !out.empty() && reaches_loss.count(out);
    bool needs = false;
    for (const std::string& in : n.inputs) needs |= !in.empty() && depends.count(in);
    if (!leads || !needs) continue;
    relevant.push_back(k);
    for (const std::string& in : n.inputs)
      if (!in.empty()) reaches_loss.insert(in);
  }

  std::vector<Node> emitted;
  int counter = 0;
  std::map<std::string, std::vector<std::string>> contributions;
  {
    Node seed_owner;
    seed_owner.name = "loss_seed";
    seed_owner.outputs = {loss};
    GradientContext seed(graph, seed_owner, {}, {}, &emitted, &counter);
    // d loss / d loss = ones of the loss's shape: a ScalarLike alone when the graph knows
    // the loss is a scalar (AddLoss records that), else expanded to its run-time shape.
    std::string one = seed.ScalarLike(1.0, loss);
    const ValueInfo* info = graph.FindValueInfo(loss);
    if (!(info && info->shape.rank_known && info->shape.dims.empty()))
      one = seed.Emit1("Expand", {one, seed.Emit1("Shape", {loss})});
    contributions[loss].push_back(one);
  }
  // `relevant` is in reverse topological order already.
  for (size_t k : relevant) {
    const Node node = graph.nodes[k];  // copy: rules may add initializers to the graph
    std::vector<std::string> output_grads;
    bool any = false;
    for (const std::string& out : node.outputs) {
      std::string g;
      auto it = out.empty() ? contributions.end() : contributions.find(out);
      if (it != contributions.end() && !it->second.empty()) {
        GradientContext acc(graph, node, {}, {}, &emitted, &counter);
        g = Accumulate(acc, it->second);
        any = true;
      }
      output_grads.push_back(g);
    }
    if (!any) continue;
    const GradientRule* rule = Gradients().Find(node.domain, node.op_type);
    if (!rule)
      return absl::UnimplementedError("[autograd] " + node.Describe() + ": no gradient rule for op " +
                                      node.op_type);
    std::vector<bool> wants;
    for (const std::string& in : node.inputs) wants.push_back(!in.empty() && depends.count(in));
    GradientContext ctx(graph, node, output_grads, wants, &emitted, &counter);
    absl::Status s = (*rule)(ctx);
    if (!s.ok())
      return absl::Status(s.code(), "[autograd] " + node.Describe() + ": " + std::string(s.message()));
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (wants[i] && !ctx.input_grads()[i].empty())
        contributions[node.inputs[i]].push_back(ctx.input_grads()[i]);
  }
  std::map<std::string, std::string> result;
  for (const std::string& w : wrt) {
    auto it = contributions.find(w);
    if (it == contributions.end() || it->second.empty()) continue;
    Node owner;
    owner.name = w;
    owner.outputs = {w};
    GradientContext acc(graph, owner, {}, {}, &emitted, &counter);
    result[w] = Accumulate(acc, it->second);
  }
  // Outputs of multi-output gradient nodes that nothing reads (e.g. dX of a first Conv,
  // whose input is data) are dropped so kernels can skip computing them.
  std::set<std::string> read;
  for (const std::vector<Node>* nodes : {&graph.nodes, &emitted})
    for (const Node& n : *nodes)
      for (const std::string& in : n.inputs) read.insert(in);
  for (const ValueInfo& o : graph.outputs) read.insert(o.name);
  for (const auto& [w, g] : result) read.insert(g);
  for (Node& n : emitted) {
    if (n.outputs.size() < 2) continue;
    int live = 0;
    for (const std::string& o : n.outputs) live += read.count(o) ? 1 : 0;
    if (live == 0) continue;  // keep dead nodes as they are
    for (std::string& o : n.outputs)
      if (!read.count(o)) o.clear();
  }
  for (Node& n : emitted) graph.nodes.push_back(std::move(n));
  return result;
}

}  // namespace tandem::training
