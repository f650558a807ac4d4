#include "training/losses.h"

#include <set>

#include "training/gradient_rules.h"

namespace tandem::training {

namespace {

std::set<std::string> ValueNames(const Graph& g) {
  std::set<std::string> names;
  for (const ValueInfo& vi : g.inputs) names.insert(vi.name);
  for (const auto& [name, t] : g.initializers) names.insert(name);
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs)
      if (!o.empty()) names.insert(o);
  return names;
}

// Appends nodes with fresh value/node names under one prefix.
class Builder {
 public:
  // `dtype` (when known) is recorded as the type of every value the builder creates, so
  // rules that read value types (e.g. ReduceMean's) see them.
  Builder(Graph& g, std::string prefix, DataType dtype)
      : g_(g), prefix_(std::move(prefix)), dtype_(dtype), taken_(ValueNames(g)) {
    for (const Node& n : g.nodes) taken_.insert(n.name);
  }
  std::string Fresh(const std::string& hint) {
    std::string base = prefix_ + "/" + hint;
    std::string name = base;
    for (int k = 1; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }
  std::string Add(const std::string& op, std::vector<std::string> inputs,
                  std::map<std::string, Attribute> attrs = {}, const std::string& domain = "") {
    Node n;
    n.op_type = op;
    n.domain = domain;
    n.name = Fresh(op);
    n.inputs = std::move(inputs);
    n.attributes = std::move(attrs);
    n.outputs = {Fresh(op + "_out")};
    Record(n.outputs[0]);
    if (!domain.empty() && !g_.opsets.count(domain)) g_.opsets[domain] = 1;
    g_.nodes.push_back(n);
    return n.outputs[0];
  }
  // Renames the last node's output to the fresh final loss name.
  std::string Finish() {
    std::string name = "loss";
    for (int k = 1; taken_.count(name); ++k) name = "loss_" + std::to_string(k);
    taken_.insert(name);
    g_.value_info.erase(g_.nodes.back().outputs[0]);
    g_.nodes.back().outputs[0] = name;
    Record(name);
    g_.value_info[name].name = name;
    g_.value_info[name].shape = Shape::Of({});  // every loss here reduces to a scalar
    return name;
  }

 private:
  void Record(const std::string& value) {
    if (dtype_ != DataType::kUndefined) g_.value_info[value] = ValueInfo{value, dtype_, Shape::Unknown()};
  }
  Graph& g_;
  std::string prefix_;
  DataType dtype_;
  std::set<std::string> taken_;
};

Attribute Int(int64_t v) { return GradientContext::Int(v); }

}  // namespace

absl::StatusOr<LossKind> LossFromString(const std::string& name) {
  if (name == "mse") return LossKind::kMse;
  if (name == "l1") return LossKind::kL1;
  if (name == "cross_entropy" || name == "ce") return LossKind::kCrossEntropy;
  if (name == "nll") return LossKind::kNll;
  if (name == "bce_with_logits" || name == "bce") return LossKind::kBceWithLogits;
  return absl::InvalidArgumentError("unknown loss '" + name +
                                    "' (expected mse, l1, cross_entropy, nll or bce_with_logits)");
}

bool TakesClassLabels(LossKind kind) { return kind == LossKind::kCrossEntropy || kind == LossKind::kNll; }

std::string LossName(LossKind kind) {
  switch (kind) {
    case LossKind::kMse: return "mse";
    case LossKind::kL1: return "l1";
    case LossKind::kCrossEntropy: return "cross_entropy";
    case LossKind::kNll: return "nll";
    case LossKind::kBceWithLogits: return "bce_with_logits";
  }
  return "?";
}

absl::StatusOr<std::string> AddLoss(Graph& g, LossKind kind, const std::string& prediction,
                                    const std::string& target, Reduction reduction) {
  std::set<std::string> names = ValueNames(g);
  if (!names.count(prediction))
    return absl::InvalidArgumentError("loss: the graph has no value named '" + prediction + "'");
  if (prediction == target)
    return absl::InvalidArgumentError("loss: prediction and target are the same value");
  const DataType pred_type = g.ValueType(prediction);  // kUndefined: accept any at run time
  const int opset = g.opset("");
  if (TakesClassLabels(kind) && opset < 12)
    return absl::InvalidArgumentError("loss: " + LossName(kind) + " uses " +
                                      (kind == LossKind::kNll ? "NegativeLogLikelihoodLoss" : "SoftmaxCrossEntropyLoss") +
                                      ", which needs ai.onnx opset >= 12; the graph imports opset " +
                                      std::to_string(opset));
  if (!names.count(target)) {
    // The target's shape follows the prediction's (class axis 1 dropped for class labels),
    // so a wrongly shaped target is refused when fed instead of silently broadcast.
    DataType tt = TakesClassLabels(kind) ? DataType::kInt64 : pred_type;
    Shape ts = Shape::Unknown();
    if (const ValueInfo* pi = g.FindValueInfo(prediction); pi && pi->shape.rank_known) {
      ts = pi->shape;
      if (TakesClassLabels(kind) && ts.dims.size() >= 2) ts.dims.erase(ts.dims.begin() + 1);
    }
    g.inputs.push_back(ValueInfo{target, tt, ts});
  }
  Attribute red;  // the fused loss ops' "reduction"
  red.kind = Attribute::Kind::kString;
  red.s = reduction == Reduction::kMean ? "mean" : "sum";
  Builder b(g, "loss_" + LossName(kind), pred_type);

  // Scalar mean or sum over every element (no axes: all axes at every opset).
  auto reduce_all = [&](const std::string& v) {
    return b.Add(reduction == Reduction::kMean ? "ReduceMean" : "ReduceSum", {v},
                 {{"keepdims", Int(0)}});
  };
  switch (kind) {
    case LossKind::kMse: {
      b.Add("MSELoss", {prediction, target}, {{"reduction", red}}, kTandemDomain);
      break;
    }
    case LossKind::kL1: {
      // |d| = Relu(d) + Relu(-d): only ops with gradient rules, and d|d|/dd = 0 at 0 like torch.
      std::string d = b.Add("Sub", {prediction, target});
      std::string abs = b.Add("Add", {b.Add("Relu", {d}), b.Add("Relu", {b.Add("Neg", {d})})});
      reduce_all(abs);
      break;
    }
    case LossKind::kCrossEntropy: {
      b.Add("SoftmaxCrossEntropyLoss", {prediction, target}, {{"reduction", red}});
      break;
    }
    case LossKind::kNll: {
      b.Add("NegativeLogLikelihoodLoss", {prediction, target}, {{"reduction", red}});
      break;
    }
    case LossKind::kBceWithLogits: {
      b.Add("BCEWithLogitsLoss", {prediction, target}, {{"reduction", red}}, kTandemDomain);
      break;
    }
  }
  return b.Finish();
}

}  // namespace tandem::training
