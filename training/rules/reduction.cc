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

// dY reshaped so that it broadcasts against X (reduced axes restored as size 1).
absl::StatusOr<std::string> KeepDims(GradientContext& c) {
  auto axes = Axes(c);
  if (!axes.ok()) return axes.status();
  bool keepdims = c.node().attr_int("keepdims", 1) != 0;
  if (keepdims || axes->empty()) return c.dY(0);  // all-axes results broadcast as they are
  if (c.opset() >= 13)
    return c.Emit1("Unsqueeze", {c.dY(0), c.Constant(Tensor::FromVector<int64_t>(
                                              *axes, {static_cast<int64_t>(axes->size())}))});
  return c.Emit1("Unsqueeze", {c.dY(0)}, {{"axes", GradientContext::Ints(*axes)}});
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
