#include "ops/optimizer_attributes.h"

namespace tandem {

OptimizerAttributes ReadOptimizerAttributes(const Node& n) {
  OptimizerAttributes a;
  const bool adamw = n.op_type == "AdamWUpdate";
  const bool adam = adamw || n.op_type == "AdamUpdate";
  a.momentum = n.attr_float("momentum", 0.9f);
  a.dampening = n.attr_float("dampening", 0.f);
  a.nesterov = n.attr_int("nesterov", 0) != 0;
  a.beta1 = n.attr_float("beta1", 0.9f);
  a.beta2 = n.attr_float("beta2", 0.999f);
  a.epsilon = n.attr_float("epsilon", 1e-8f);
  // torch defaults: AdamW 1e-2, everything else 0.
  a.weight_decay = n.attr_float("weight_decay", adamw ? 1e-2f : 0.f);
  if (adam && !(a.beta1 >= 0 && a.beta1 < 1 && a.beta2 >= 0 && a.beta2 < 1))
    a.invalid = "attributes beta1 and beta2 must lie in [0, 1)";
  if (n.op_type == "MomentumUpdate" && a.nesterov && (a.momentum <= 0 || a.dampening != 0))
    a.invalid = "nesterov momentum requires momentum > 0 and dampening = 0";
  return a;
}

}  // namespace tandem
