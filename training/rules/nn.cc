// Gradients of the neural-network ops: Conv, ConvTranspose, MaxPool, AveragePool,
// GlobalAveragePool, BatchNormalization and LayerNormalization. Convolutions, windowed
// pools and normalizations use fused ai.tandem *Grad kernels (providers/cpu/kernels/
// conv_grad.cc, pool_grad.cc, norm_grad.cc: oneDNN backward primitives for float32) that
// take the forward node's attributes.
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

// The *Grad node of a forward node, with its attributes: returns {dX, dW, dB}-like outputs.
std::vector<std::string> EmitGrad(GradientContext& c, const std::string& op,
                                  std::vector<std::string> inputs, int num_outputs,
                                  std::map<std::string, Attribute> attrs) {
  return c.Emit(op, std::move(inputs), num_outputs, std::move(attrs), kTandemDomain);
}

void SetWanted(GradientContext& c, const std::vector<std::string>& grads) {
  for (size_t i = 0; i < grads.size(); ++i)
    if (c.wants(i) && !c.X(i).empty()) c.SetInputGrad(i, grads[i]);
}

// Conv / ConvTranspose: (X, W, B) -> Y.
GradientRule ConvRule(const std::string& grad_op) {
  return [grad_op](GradientContext& c) -> absl::Status {
    if (!c.has_dY(0)) return absl::OkStatus();
    SetWanted(c, EmitGrad(c, grad_op, {c.dY(0), c.X(0), c.X(1)}, 3, c.node().attributes));
    return absl::OkStatus();
  };
}

// MaxPool / AveragePool: X -> Y (MaxPool's Indices output carries no gradient).
GradientRule PoolRule(const std::string& grad_op) {
  return [grad_op](GradientContext& c) -> absl::Status {
    if (!c.has_dY(0) || !c.wants(0)) return absl::OkStatus();
    c.SetInputGrad(0, EmitGrad(c, grad_op, {c.dY(0), c.X(0)}, 1, c.node().attributes)[0]);
    return absl::OkStatus();
  };
}

}  // namespace

void RegisterNnGradients(GradientRegistry& r) {
  r.Add("Conv", ConvRule("ConvGrad"));
  r.Add("ConvTranspose", ConvRule("ConvTransposeGrad"));
  r.Add("MaxPool", PoolRule("MaxPoolGrad"));
  r.Add("AveragePool", PoolRule("AveragePoolGrad"));

  // Y[n, c] = mean of X[n, c, ...]  =>  dX = broadcast(dY / spatial size).
  r.Add("GlobalAveragePool", [](GradientContext& c) -> absl::Status {
    if (!c.has_dY(0) || !c.wants(0)) return absl::OkStatus();
    c.SetInputGrad(0, c.Emit1("GlobalAveragePoolGrad", {c.dY(0), c.X(0)}, {}, kTandemDomain));
    return absl::OkStatus();
  });

  // (X, scale, B, mean, var) -> Y[, running_mean, running_var]. In training mode (opset 14+
  // training_mode=1, or earlier opsets with the statistics outputs) Y uses batch
  // statistics, so dX has the terms through mean and variance; otherwise mean/var are the
  // (constant) running statistics. The running-statistics outputs carry no gradient.
  r.Add("BatchNormalization", [](GradientContext& c) -> absl::Status {
    if (!c.has_dY(0)) return absl::OkStatus();
    const Node& n = c.node();
    if (c.opset() < 9 && n.attr_int("spatial", 1) == 0)
      return absl::UnimplementedError("BatchNormalization gradient with spatial=0");
    const bool training = c.opset() >= 14 ? n.attr_int("training_mode", 0) != 0 : n.has_output(1);
    std::vector<std::string> inputs = {c.dY(0), c.X(0), c.X(1)};
    if (!training) {
      inputs.push_back(c.X(3));
      inputs.push_back(c.X(4));
    }
    auto g = EmitGrad(c, "BatchNormalizationGrad", inputs, 3,
                      {{"epsilon", GradientContext::Float(n.attr_float("epsilon", 1e-5f))},
                       {"training_mode", GradientContext::Int(training ? 1 : 0)}});
    g.resize(3);
    SetWanted(c, g);
    return absl::OkStatus();
  });

  // (X, Scale[, B]) -> Y[, Mean, InvStdDev]; Scale and B may broadcast over X.dims[axis:].
  r.Add("LayerNormalization", [](GradientContext& c) -> absl::Status {
    if (c.has_dY(1) || c.has_dY(2))
      return absl::UnimplementedError("gradients through the Mean/InvStdDev outputs");
    if (!c.has_dY(0)) return absl::OkStatus();
    const Node& n = c.node();
    auto g = EmitGrad(c, "LayerNormalizationGrad", {c.dY(0), c.X(0), c.X(1)}, 3,
                      {{"axis", GradientContext::Int(n.attr_int("axis", -1))},
                       {"epsilon", GradientContext::Float(n.attr_float("epsilon", 1e-5f))}});
    if (c.wants(0)) c.SetInputGrad(0, g[0]);
    if (c.wants(1)) c.SetInputGrad(1, c.SumToShapeOf(g[1], c.X(1)));
    if (c.wants(2) && !c.X(2).empty()) c.SetInputGrad(2, c.SumToShapeOf(g[2], c.X(2)));
    return absl::OkStatus();
  });
}

}  // namespace tandem::training::rules
