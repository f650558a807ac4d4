// Attributes of the ai.tandem optimizer update ops (SGDUpdate, MomentumUpdate, AdamUpdate,
// AdamWUpdate) with torch.optim's defaults, read in one place for every provider's kernel.
#pragma once
#include <string>

#include "graph/node.h"

namespace tandem {

struct OptimizerAttributes {
  float momentum = 0.9f, dampening = 0.f;        // MomentumUpdate
  bool nesterov = false;
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // Adam/AdamW
  float weight_decay = 0.f;                      // AdamW defaults to 1e-2
  std::string invalid;                           // non-empty: why the node is unusable
};

OptimizerAttributes ReadOptimizerAttributes(const Node& node);

}  // namespace tandem
