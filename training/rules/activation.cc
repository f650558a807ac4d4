// Gradients of activations: fused ai.tandem *Grad kernels where a composition would take
// several passes over memory.
#include "training/rules/register.h"

namespace tandem::training::rules {

void RegisterActivationGradients(GradientRegistry& r) {
  r.Add("Relu", [](GradientContext& c) {
    c.SetInputGrad(0, c.Emit1("ReluGrad", {c.dY(0), c.Y(0)}, {}, kTandemDomain));
    return absl::OkStatus();
  });
}

}  // namespace tandem::training::rules
