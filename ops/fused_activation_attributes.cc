#include "ops/fused_activation_attributes.h"

#include <limits>

namespace tandem {

bool DescribeFusedActivation(const Graph& graph, const Node& act, Node& fused, FusableActivations fusable) {
  float alpha = 0.f, beta = 0.f;
  bool gelu_tanh = false;
  const bool cpu = fusable == FusableActivations::kCpu;
  if (!act.domain.empty() && !(act.domain == kTandemDomain && act.op_type == "Gelu")) return false;
  if (cpu && act.op_type == "HardSigmoid") {
    alpha = act.attr_float("alpha", 0.2f);
    beta = act.attr_float("beta", 0.5f);
  } else if (cpu && act.op_type == "Gelu") {
    const std::string form = act.attr_string("approximate", "none");
    if (form != "none" && form != "tanh") return false;
    gelu_tanh = form == "tanh";
  } else if (cpu && (act.op_type == "HardSwish" || act.op_type == "Mish")) {  // no parameters
  } else if (act.op_type == "LeakyRelu") {
    alpha = act.attr_float("alpha", 0.01f);
  } else if (act.op_type == "Clip") {
    alpha = -std::numeric_limits<float>::max();
    beta = std::numeric_limits<float>::max();
    if (graph.opset("") < 11) {
      alpha = act.attr_float("min", alpha);
      beta = act.attr_float("max", beta);
    } else {
      for (size_t i = 1; i <= 2; ++i) {
        if (!act.has_input(i)) continue;
        auto it = graph.initializers.find(act.inputs[i]);
        if (it == graph.initializers.end() || it->second.dtype() != DataType::kFloat ||
            it->second.numel() != 1)
          return false;
        (i == 1 ? alpha : beta) = it->second.data<float>()[0];
      }
    }
    if (!(alpha <= beta)) return false;  // the Clip kernel's reference path handles these
  } else if (act.op_type != "Relu" && act.op_type != "Sigmoid" && act.op_type != "Tanh") {
    return false;
  }
  SetFusedActivation(fused, act.op_type, alpha, beta);
  if (gelu_tanh) fused.attributes["activation_approximate"] = StringAttribute("tanh");
  return true;
}

void SetFusedActivation(Node& fused, const std::string& activation, float alpha, float beta) {
  Attribute name;
  name.kind = Attribute::Kind::kString;
  name.s = activation;
  fused.attributes["activation"] = name;
  Attribute a, b;
  a.kind = b.kind = Attribute::Kind::kFloat;
  a.f = alpha;
  b.f = beta;
  fused.attributes["activation_alpha"] = a;
  fused.attributes["activation_beta"] = b;
  fused.attributes.erase("activation_approximate");
}

}  // namespace tandem
