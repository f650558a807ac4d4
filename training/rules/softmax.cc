// Gradients of Softmax and LogSoftmax through the fused ai.tandem SoftmaxGrad and
// LogSoftmaxGrad kernels. Before opset 13 both coerce the input to 2-D at `axis`
// (default 1), so the sums run over all dims from `axis` on; from 13 over `axis` alone
// (default -1).
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

GradientRule SoftmaxRule(const std::string& grad_op) {
  return [grad_op](GradientContext& c) {
    const bool coerce = c.opset() < 13;
    int64_t axis = c.node().attr_int("axis", coerce ? 1 : -1);
    c.SetInputGrad(0, c.Emit1(grad_op, {c.dY(0), c.Y(0)},
                              {{"axis", GradientContext::Int(axis)},
                               {"coerce", GradientContext::Int(coerce ? 1 : 0)}},
                              kTandemDomain));
    return absl::OkStatus();
  };
}

}  // namespace

void RegisterSoftmaxGradients(GradientRegistry& r) {
  r.Add("Softmax", SoftmaxRule("SoftmaxGrad"));
  r.Add("LogSoftmax", SoftmaxRule("LogSoftmaxGrad"));
}

}  // namespace tandem::training::rules
