// Gradients of unary math functions and activations (and Pow): compositions of forward
// ops where they are one or two cheap passes, fused ai.tandem *Grad kernels otherwise
// (providers/cpu/kernels/math/grad_math_ops.cc).
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

bool IsFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
         t == DataType::kBfloat16;
}

// `v` converted to the element type of `like` (a no-op when both types are known equal or
// `like`'s type is unknown before opset 15, where CastLike does not exist).
std::string AsTypeOf(GradientContext& c, const std::string& v, const std::string& like) {
  DataType tv = c.graph().ValueType(v), tl = c.graph().ValueType(like);
  if (tl != DataType::kUndefined) {
    if (tv == tl) return v;
    return c.Emit1("Cast", {v}, {{"to", GradientContext::Int(static_cast<int64_t>(tl))}});
  }
  if (c.opset() >= 15) return c.Emit1("CastLike", {v, like});
  return v;
}

// A rule dX = Op(dY, V) with V = Y(0) or X(0) and the node's alpha passed on.
GradientRule Fused(const std::string& op, bool uses_output, float default_alpha = -1.f) {
  return [op, uses_output, default_alpha](GradientContext& c) {
    std::map<std::string, Attribute> attrs;
    if (default_alpha >= 0.f)
      attrs["alpha"] = GradientContext::Float(c.node().attr_float("alpha", default_alpha));
    c.SetInputGrad(0, c.Emit1(op, {c.dY(0), uses_output ? c.Y(0) : c.X(0)}, attrs, kTandemDomain));
    return absl::OkStatus();
  };
}

}  // namespace

void RegisterElementwiseGradients(GradientRegistry& r) {
  // Y = A^B: dA = dY * B * A^(B-1), dB = dY * Y * ln(A) (real only for A > 0).
  r.Add("Pow", [](GradientContext& c) {
    const std::string& a = c.X(0);
    if (c.wants(0)) {
      std::string b = AsTypeOf(c, c.X(1), a);
      std::string b1 = c.Emit1("Sub", {b, c.ScalarLike(1.0, b)});
      std::string g = c.Emit1("Mul", {c.Emit1("Mul", {c.dY(0), b}), c.Emit1("Pow", {a, b1})});
      c.SetInputGrad(0, c.SumToShapeOf(g, a));
    }
    DataType tb = c.graph().ValueType(c.X(1));
    if (c.wants(1) && (tb == DataType::kUndefined || IsFloat(tb))) {
      std::string g = c.Emit1("Mul", {c.Emit1("Mul", {c.dY(0), c.Y(0)}), c.Emit1("Log", {a})});
      DataType ta = c.graph().ValueType(a);
      if (ta != DataType::kUndefined && tb != DataType::kUndefined && ta != tb)
        g = c.Emit1("Cast", {g}, {{"to", GradientContext::Int(static_cast<int64_t>(tb))}});
      c.SetInputGrad(1, c.SumToShapeOf(g, c.X(1)));
    }
    return absl::OkStatus();
  });
  r.Add("Sqrt", [](GradientContext& c) {  // dY / (2 Y)
    std::string two_y = c.Emit1("Mul", {c.Y(0), c.ScalarLike(2.0, c.Y(0))});
    c.SetInputGrad(0, c.Emit1("Div", {c.dY(0), two_y}));
    return absl::OkStatus();
  });
  r.Add("Exp", [](GradientContext& c) {
    c.SetInputGrad(0, c.Emit1("Mul", {c.dY(0), c.Y(0)}));
    return absl::OkStatus();
  });
  r.Add("Log", [](GradientContext& c) {
    c.SetInputGrad(0, c.Emit1("Div", {c.dY(0), c.X(0)}));
    return absl::OkStatus();
  });
  r.Add("Erf", [](GradientContext& c) {  // d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
    const std::string& x = c.X(0);
    std::string e = c.Emit1("Exp", {c.Emit1("Neg", {c.Emit1("Mul", {x, x})})});
    c.SetInputGrad(0, c.Emit1("Mul", {c.dY(0), c.Emit1("Mul", {e, c.ScalarLike(1.1283791670955126, x)})}));
    return absl::OkStatus();
  });
  // Gelu (ONNX opset 20, and ai.tandem's from optimizer/gelu_fusion.h): one GeluGrad pass.
  const GradientRule gelu = [](GradientContext& c) {
    c.SetInputGrad(0, c.Emit1("GeluGrad", {c.dY(0), c.X(0)},
                              {{"approximate", GradientContext::String(c.node().attr_string("approximate", "none"))}},
                              kTandemDomain));
    return absl::OkStatus();
  };
  r.Add("Gelu", gelu);
  r.Add("Gelu", gelu, kTandemDomain);
  r.Add("Softplus", [](GradientContext& c) {  // d/dx ln(1 + e^x) = sigmoid(x)
    c.SetInputGrad(0, c.Emit1("Mul", {c.dY(0), c.Emit1("Sigmoid", {c.X(0)})}));
    return absl::OkStatus();
  });
  r.Add("Abs", Fused("AbsGrad", false));
  r.Add("LeakyRelu", Fused("LeakyReluGrad", false, 0.01f));
  r.Add("Elu", Fused("EluGrad", false, 1.0f));
  r.Add("Tanh", Fused("TanhGrad", true));
  r.Add("Sigmoid", Fused("SigmoidGrad", true));
}

}  // namespace tandem::training::rules
