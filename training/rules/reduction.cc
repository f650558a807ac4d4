// Gradients of reductions: the incoming gradient is broadcast back over the reduced axes.
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

// The node's reduction axes: attribute (older opsets) or constant input 1; empty = all.
absl::StatusOr<std::vector<int64_t>> Axes(const GradientContext& c) {
  if (c.node().has_attr("axes")) return c.node().attr_ints("axes");
  if (c.X(1).empty()) return std::vector<int64_t>{};
  auto it = c.graph().initializers.find(c.X(1));
  if (it == c.graph().initializers.end())
    return absl::UnimplementedError("reduction axes must be a constant to differentiate");
  return it->second.ToInt64Vector();
}

// `value` (dY, or Y) reshaped so that it broadcasts against X (reduced axes restored as
// size 1).
absl::StatusOr<std::string> KeepDims(GradientContext& c, const std::string& value) {
  auto axes = Axes(c);
  if (!axes.ok()) return axes.status();
  bool keepdims = c.node().attr_int("keepdims", 1) != 0;
  if (keepdims || axes->empty()) return value;  // all-axes results broadcast as they are
  if (c.opset() >= 13)
    return c.Emit1("Unsqueeze", {value, c.Constant(Tensor::FromVector<int64_t>(
                                           *axes, {static_cast<int64_t>(axes->size())}))});
  return c.Emit1("Unsqueeze", {value}, {{"axes", GradientContext::Ints(*axes)}});
}
absl::StatusOr<std::string> KeepDims(GradientContext& c) { return KeepDims(c, c.dY(0)); }

// ReduceMax/ReduceMin: the gradient goes to the elements equal to the result, shared
// evenly among ties (as PyTorch's amax/amin).
absl::Status ExtremumGradient(GradientContext& c) {
  auto axes = Axes(c);
  if (!axes.ok()) return axes.status();
  auto g = KeepDims(c);
  if (!g.ok()) return g.status();
  auto y = KeepDims(c, c.Y(0));
  if (!y.ok()) return y.status();
  const std::string& x = c.X(0);
  std::string mask = c.Emit1("Where", {c.Emit1("Equal", {x, *y}), c.ScalarLike(1.0, x), c.ScalarLike(0.0, x)});
  std::string ties;
  if (axes->empty())
    ties = c.Emit1("ReduceSum", {mask}, {{"keepdims", GradientContext::Int(1)}});
  else if (c.opset() >= 13)
    ties = c.Emit1("ReduceSum", {mask, c.Constant(Tensor::FromVector<int64_t>(*axes, {static_cast<int64_t>(axes->size())}))},
                   {{"keepdims", GradientContext::Int(1)}});
  else
    ties = c.Emit1("ReduceSum", {mask}, {{"axes", GradientContext::Ints(*axes)}, {"keepdims", GradientContext::Int(1)}});
  c.SetInputGrad(0, c.Emit1("Div", {c.Emit1("Mul", {mask, *g}), ties}));
  return absl::OkStatus();
}

}  // namespace

void RegisterReductionGradients(GradientRegistry& r) {
  r.Add("ReduceSum", [](GradientContext& c) -> absl::Status {
    auto axes = Axes(c);
    if (!axes.ok()) return axes.status();
    if (axes->empty() && c.node().attr_int("noop_with_empty_axes", 0)) {
      c.SetInputGrad(0, c.dY(0));
      return absl::OkStatus();
    }
    auto g = KeepDims(c);
    if (!g.ok()) return g.status();
    c.SetInputGrad(0, c.Emit1("Expand", {*g, c.Emit1("Shape", {c.X(0)})}));
    return absl::OkStatus();
  });
  r.Add("ReduceMax", ExtremumGradient);
  r.Add("ReduceMin", ExtremumGradient);
  r.Add("ReduceMean", [](GradientContext& c) -> absl::Status {
    auto g = KeepDims(c);
    if (!g.ok()) return g.status();
    // mean = sum / count with count = size(X) / size(Y)
    std::string scaled = c.Emit1("MeanScale", {*g, c.X(0), c.Y(0)}, {}, kTandemDomain);
    c.SetInputGrad(0, c.Emit1("Expand", {scaled, c.Emit1("Shape", {c.X(0)})}));
    return absl::OkStatus();
  });
}

}  // namespace tandem::training::rules
