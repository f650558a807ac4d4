#include "training/gradient_rules.h"

#include "training/rules/register.h"

namespace tandem::training {

GradientContext::GradientContext(Graph& graph, const Node& node,
                                 std::vector<std::string> output_grads,
                                 std::vector<bool> wants_grad, std::vector<Node>* emitted,
                                 int* counter)
    : graph_(graph),
      node_(node),
      output_grads_(std::move(output_grads)),
      wants_(std::move(wants_grad)),
      emitted_(emitted),
      counter_(counter),
      input_grads_(node.inputs.size()) {}

namespace {
const std::string kNone;
}

const std::string& GradientContext::X(size_t i) const {
  return i < node_.inputs.size() ? node_.inputs[i] : kNone;
}
const std::string& GradientContext::Y(size_t i) const {
  return i < node_.outputs.size() ? node_.outputs[i] : kNone;
}
const std::string& GradientContext::dY(size_t i) const {
  return i < output_grads_.size() ? output_grads_[i] : kNone;
}

std::string GradientContext::Fresh(const std::string& hint) {
  std::string base = (node_.name.empty() ? node_.outputs[0] : node_.name) + "/grad/" + hint;
  return base + "_" + std::to_string((*counter_)++);
}

std::vector<std::string> GradientContext::Emit(const std::string& op,
                                               std::vector<std::string> inputs,
                                               int num_outputs,
                                               std::map<std::string, Attribute> attrs,
                                               const std::string& domain) {
  Node n;
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(inputs);
  n.attributes = std::move(attrs);
  n.name = Fresh(op);
  for (int i = 0; i < num_outputs; ++i) n.outputs.push_back(n.name + ":" + std::to_string(i));
  if (!domain.empty() && !graph_.opsets.count(domain)) graph_.opsets[domain] = 1;
  std::vector<std::string> outs = n.outputs;
  emitted_->push_back(std::move(n));
  return outs;
}

std::string GradientContext::Constant(const Tensor& t) {
  std::string name = Fresh("const");
  graph_.initializers[name] = t;
  return name;
}

std::string GradientContext::ScalarLike(double value, const std::string& like) {
  return Emit1("ScalarLike", {like}, {{"value", Float(static_cast<float>(value))}}, kTandemDomain);
}

std::string GradientContext::SumToShapeOf(const std::string& grad, const std::string& like) {
  return Emit1("SumToShape", {grad, like}, {}, kTandemDomain);
}

void GradientContext::SetInputGrad(size_t i, const std::string& grad) {
  if (i < input_grads_.size()) input_grads_[i] = grad;
}

Attribute GradientContext::Int(int64_t v) { return IntAttribute(v); }
Attribute GradientContext::Ints(std::vector<int64_t> v) { return IntsAttribute(std::move(v)); }
Attribute GradientContext::Float(float v) { return FloatAttribute(v); }
Attribute GradientContext::String(std::string v) { return StringAttribute(std::move(v)); }

void GradientRegistry::Add(const std::string& op, GradientRule rule, const std::string& domain) {
  rules_[{domain, op}] = std::move(rule);
}

const GradientRule* GradientRegistry::Find(const std::string& domain, const std::string& op) const {
  auto it = rules_.find({domain == "ai.onnx" ? "" : domain, op});
  return it == rules_.end() ? nullptr : &it->second;
}

std::vector<std::string> GradientRegistry::Ops() const {
  std::vector<std::string> out;
  for (const auto& [key, rule] : rules_) out.push_back(key.second);
  return out;
}

const GradientRegistry& Gradients() {
  static const GradientRegistry* registry = [] {
    auto* r = new GradientRegistry;
    rules::RegisterAllGradients(*r);
    return r;
  }();
  return *registry;
}

}  // namespace tandem::training
