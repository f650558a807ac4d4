// Gradients of broadcasting arithmetic: each input's gradient is summed back to its shape.
#include "training/rules/register.h"

namespace tandem::training::rules {

void RegisterArithmeticGradients(GradientRegistry& r) {
  r.Add("Add", [](GradientContext& c) {
    for (size_t i = 0; i < 2; ++i)
      if (c.wants(i)) c.SetInputGrad(i, c.SumToShapeOf(c.dY(0), c.X(i)));
    return absl::OkStatus();
  });
  r.Add("Sub", [](GradientContext& c) {
    if (c.wants(0)) c.SetInputGrad(0, c.SumToShapeOf(c.dY(0), c.X(0)));
    if (c.wants(1)) c.SetInputGrad(1, c.SumToShapeOf(c.Emit1("Neg", {c.dY(0)}), c.X(1)));
    return absl::OkStatus();
  });
  r.Add("Mul", [](GradientContext& c) {
    // d(a*b)/da = b, d(a*b)/db = a
    if (c.wants(0)) c.SetInputGrad(0, c.SumToShapeOf(c.Emit1("Mul", {c.dY(0), c.X(1)}), c.X(0)));
    if (c.wants(1)) c.SetInputGrad(1, c.SumToShapeOf(c.Emit1("Mul", {c.dY(0), c.X(0)}), c.X(1)));
    return absl::OkStatus();
  });
  r.Add("Div", [](GradientContext& c) {
    // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2 = -y/b
    if (c.wants(0)) c.SetInputGrad(0, c.SumToShapeOf(c.Emit1("Div", {c.dY(0), c.X(1)}), c.X(0)));
    if (c.wants(1)) {
      std::string y_over_b = c.Emit1("Div", {c.Y(0), c.X(1)});
      std::string g = c.Emit1("Neg", {c.Emit1("Mul", {c.dY(0), y_over_b})});
      c.SetInputGrad(1, c.SumToShapeOf(g, c.X(1)));
    }
    return absl::OkStatus();
  });
  r.Add("Neg", [](GradientContext& c) {
    c.SetInputGrad(0, c.Emit1("Neg", {c.dY(0)}));
    return absl::OkStatus();
  });
  r.Add("Identity", [](GradientContext& c) {
    c.SetInputGrad(0, c.dY(0));
    return absl::OkStatus();
  });
}

}  // namespace tandem::training::rules
