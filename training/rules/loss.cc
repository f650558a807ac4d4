// Gradients of losses, as fused ai.tandem kernels (providers/cpu/kernels/nn/loss_grad_ops.cc):
//   SoftmaxCrossEntropyLoss (ONNX, opset 12+): dLogits = (softmax - onehot) * w[t] * dY /
//     normaliser (+ the log_prob output's gradient when it is used). No gradient flows to
//     the labels or the class weights.
//   NegativeLogLikelihoodLoss (ONNX, opset 12+): dInput = -onehot * w[t] * dY / normaliser.
//   ai.tandem BCEWithLogitsLoss: dX = (sigmoid(x) - t) * dY', dT = -x * dY'.
//   ai.tandem MSELoss: dX = 2 (x - t) * dY', dT = -dX.
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

// Copies the listed attributes of the forward node (those present).
std::map<std::string, Attribute> CopyAttrs(const Node& n, std::initializer_list<const char*> keys) {
  std::map<std::string, Attribute> out;
  for (const char* k : keys)
    if (const Attribute* a = n.attr(k)) out[k] = *a;
  return out;
}

}  // namespace

void RegisterLossGradients(GradientRegistry& r) {
  r.Add("SoftmaxCrossEntropyLoss", [](GradientContext& c) -> absl::Status {
    if (c.wants(2))
      return absl::UnimplementedError("no gradient for the class weights of SoftmaxCrossEntropyLoss");
    if (!c.wants(0) || (!c.has_dY(0) && !c.has_dY(1))) return absl::OkStatus();
    std::vector<std::string> in = {c.dY(0), c.X(0), c.X(1), c.X(2), c.dY(1)};
    while (!in.empty() && in.back().empty()) in.pop_back();
    c.SetInputGrad(0, c.Emit1("SoftmaxCrossEntropyLossGrad", in,
                              CopyAttrs(c.node(), {"reduction", "ignore_index"}), kTandemDomain));
    return absl::OkStatus();
  });
  r.Add("NegativeLogLikelihoodLoss", [](GradientContext& c) -> absl::Status {
    if (c.wants(2))
      return absl::UnimplementedError("no gradient for the class weights of NegativeLogLikelihoodLoss");
    if (!c.wants(0) || !c.has_dY(0)) return absl::OkStatus();
    std::vector<std::string> in = {c.dY(0), c.X(0), c.X(1), c.X(2)};
    if (in.back().empty()) in.pop_back();
    c.SetInputGrad(0, c.Emit1("NegativeLogLikelihoodLossGrad", in,
                              CopyAttrs(c.node(), {"reduction", "ignore_index"}), kTandemDomain));
    return absl::OkStatus();
  });
  // Element-wise losses of (x, target) with a fused `<op>Grad(dY, x, t) -> (dX [, dT])`.
  for (const char* op : {"BCEWithLogitsLoss", "MSELoss"}) {
    r.Add(
        op,
        [grad = std::string(op) + "Grad"](GradientContext& c) -> absl::Status {
          if (!c.has_dY(0)) return absl::OkStatus();
          int outputs = c.wants(1) ? 2 : 1;
          auto g = c.Emit(grad, {c.dY(0), c.X(0), c.X(1)}, outputs, CopyAttrs(c.node(), {"reduction"}),
                          kTandemDomain);
          if (c.wants(0)) c.SetInputGrad(0, g[0]);
          if (c.wants(1)) c.SetInputGrad(1, g[1]);
          return absl::OkStatus();
        },
        kTandemDomain);
  }
}

}  // namespace tandem::training::rules
