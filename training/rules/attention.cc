// Gradient of ai.tandem FusedAttention (training fuses attention before the gradients are
// built: training/training_graph.cc): one ai.tandem FusedAttentionGrad recomputing the
// probabilities (providers/cpu/kernels/nn/fused_attention_grad.cc). Its outputs have Y's
// broadcast batch dims; each is summed down to its operand's shape (a no-op where they agree).
#include "training/rules/register.h"

namespace tandem::training::rules {

void RegisterAttentionGradients(GradientRegistry& r) {
  r.Add("FusedAttention", [](GradientContext& c) -> absl::Status {
    if (!c.has_dY(0)) return absl::OkStatus();
    const bool masked = !c.X(3).empty(), mask_grad = masked && c.wants(3);
    std::vector<std::string> inputs = {c.dY(0), c.X(0), c.X(1), c.X(2)};
    if (masked) inputs.push_back(c.X(3));
    const std::vector<std::string> g =
        c.Emit("FusedAttentionGrad", inputs, mask_grad ? 4 : 3, c.node().attributes, kTandemDomain);
    for (size_t i = 0; i < g.size(); ++i)
      if (c.wants(i)) c.SetInputGrad(i, c.SumToShapeOf(g[i], c.X(i)));
    return absl::OkStatus();
  }, kTandemDomain);
}

}  // namespace tandem::training::rules
