// Gradients of data-movement ops (Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Concat,
// Split, Slice, Gather, constant-mode Pad), selections (Where, Clip, Dropout) and Cast. Shape-only ops
// reshape dY back to Shape(X); the scatter-like inverses use fused ai.tandem kernels
// (ConcatGrad, SliceGrad, GatherGrad, ClipGrad, DropoutGrad in grad_math_ops.cc).
#include "training/rules/register.h"

namespace tandem::training::rules {

namespace {

// An ai.tandem `grad_op` node reading dY and then every input of the forward node, with the
// forward node's attributes plus its `opset` and `extra`: the grad kernel re-reads the
// forward node's inputs as the forward kernel would (PadGrad, ResizeGrad).
std::string EmitForwardGrad(GradientContext& c, const std::string& grad_op,
                            std::map<std::string, Attribute> extra) {
  std::vector<std::string> in = {c.dY(0)};
  for (size_t i = 0; i < c.node().inputs.size(); ++i) in.push_back(c.X(i));
  std::map<std::string, Attribute> attrs = c.node().attributes;
  attrs["opset"] = GradientContext::Int(c.opset());
  for (auto& [key, value] : extra) attrs[key] = std::move(value);
  return c.Emit1(grad_op, in, attrs, kTandemDomain);
}

bool IsFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 ||
         t == DataType::kBfloat16;
}

std::string Int64s(GradientContext& c, const std::vector<int64_t>& v) {
  return c.Constant(Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}));
}

// dX = Reshape(dY, Shape(X)): the rule of every op that only relabels the shape.
absl::Status ReshapeBack(GradientContext& c) {
  if (c.opset() < 5) return absl::UnimplementedError("gradient needs Reshape with a shape input (opset >= 5)");
  std::map<std::string, Attribute> attrs;
  if (c.opset() >= 14) attrs["allowzero"] = GradientContext::Int(1);  // zero dims are literal
  c.SetInputGrad(0, c.Emit1("Reshape", {c.dY(0), c.Emit1("Shape", {c.X(0)})}, attrs));
  return absl::OkStatus();
}

// Whether value `v` is a constant whose single element is zero/false.
bool IsConstantZero(const GradientContext& c, const std::string& v) {
  auto it = c.graph().initializers.find(v);
  return it != c.graph().initializers.end() && it->second.numel() == 1 &&
         it->second.ElementAsDouble(0) == 0.0;
}

}  // namespace

void RegisterShapeGradients(GradientRegistry& r) {
  for (const char* op : {"Flatten", "Reshape", "Squeeze", "Unsqueeze"}) r.Add(op, ReshapeBack);

  r.Add("Transpose", [](GradientContext& c) {
    std::map<std::string, Attribute> attrs;
    if (c.node().has_attr("perm")) {  // absent perm reverses the dims: its own inverse
      std::vector<int64_t> perm = c.node().attr_ints("perm"), inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) {
        if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size()))
          return absl::InvalidArgumentError("perm is not a permutation");
        inv[perm[i]] = static_cast<int64_t>(i);
      }
      attrs["perm"] = GradientContext::Ints(inv);
    }
    c.SetInputGrad(0, c.Emit1("Transpose", {c.dY(0)}, attrs));
    return absl::OkStatus();
  });

  r.Add("Concat", [](GradientContext& c) {
    int64_t axis = c.node().attr_int("axis", 1);  // required from opset 4; 1 before
    std::vector<std::string> inputs = {c.dY(0)};
    for (const std::string& x : c.node().inputs) inputs.push_back(c.Emit1("Shape", {x}));
    std::vector<std::string> parts =
        c.Emit("ConcatGrad", inputs, static_cast<int>(c.node().inputs.size()),
               {{"axis", GradientContext::Int(axis)}}, kTandemDomain);
    for (size_t i = 0; i < parts.size(); ++i)
      if (c.wants(i)) c.SetInputGrad(i, parts[i]);
    return absl::OkStatus();
  });

  // The split attribute/input (13) or num_outputs (18) only fix the piece sizes, which the
  // gradients already have: dX = Concat of the dY pieces, zeros for unused outputs.
  r.Add("Split", [](GradientContext& c) -> absl::Status {
    if (c.opset() < 8) return absl::UnimplementedError("Split gradient needs Expand (opset >= 8)");
    std::vector<std::string> parts;
    for (size_t i = 0; i < c.node().outputs.size(); ++i) {
      if (c.has_dY(i)) {
        parts.push_back(c.dY(i));
      } else {
        const std::string& y = c.Y(i);
        parts.push_back(c.Emit1("Expand", {c.ScalarLike(0.0, y), c.Emit1("Shape", {y})}));
      }
    }
    int64_t axis = c.node().attr_int("axis", 0);
    c.SetInputGrad(0, c.Emit1("Concat", parts, {{"axis", GradientContext::Int(axis)}}));
    return absl::OkStatus();
  });

  // Attributes starts/ends/axes before opset 10; inputs (plus steps) from 10.
  r.Add("Slice", [](GradientContext& c) {
    std::vector<std::string> in = {c.dY(0), c.Emit1("Shape", {c.X(0)})};
    if (c.opset() >= 10) {
      for (size_t i = 1; i <= 4; ++i) in.push_back(c.X(i));
    } else {
      in.push_back(Int64s(c, c.node().attr_ints("starts")));
      in.push_back(Int64s(c, c.node().attr_ints("ends")));
      in.push_back(c.node().has_attr("axes") ? Int64s(c, c.node().attr_ints("axes")) : "");
    }
    while (!in.empty() && in.back().empty()) in.pop_back();
    c.SetInputGrad(0, c.Emit1("SliceGrad", in, {}, kTandemDomain));
    return absl::OkStatus();
  });

  r.Add("Gather", [](GradientContext& c) {
    int64_t axis = c.node().attr_int("axis", 0);
    c.SetInputGrad(0, c.Emit1("GatherGrad", {c.dY(0), c.Emit1("Shape", {c.X(0)}), c.X(1)},
                              {{"axis", GradientContext::Int(axis)}}, kTandemDomain));
    return absl::OkStatus();
  });

  r.Add("Pad", [](GradientContext& c) -> absl::Status {
    if (c.node().attr_string("mode", "constant") != "constant") {
      // reflect / edge / wrap: several outputs copy one input; PadGrad adds them back up.
      c.SetInputGrad(0, EmitForwardGrad(c, "PadGrad", {}));
      return absl::OkStatus();
    }
    // Constant mode: dX is dY with the padding cut off (and cropped parts restored as
    // zeros), i.e. dY padded by the negated pads.
    if (c.opset() < 11) {
      std::vector<int64_t> pads = c.node().attr_ints("pads");
      for (int64_t& p : pads) p = -p;
      c.SetInputGrad(0, c.Emit1("Pad", {c.dY(0)}, {{"pads", GradientContext::Ints(pads)}}));
      return absl::OkStatus();
    }
    std::vector<std::string> in = {c.dY(0), c.Emit1("Neg", {c.X(1)})};
    if (!c.X(3).empty()) in.insert(in.end(), {"", c.X(3)});  // axes (opset 18)
    c.SetInputGrad(0, c.Emit1("Pad", in));
    return absl::OkStatus();
  });
  // Resize / Upsample: ai.tandem ResizeGrad runs the forward taps backwards. roi, scales
  // and sizes get no gradient.
  for (const char* op : {"Resize", "Upsample"}) {
    const bool upsample = std::string(op) == "Upsample";
    r.Add(op, [upsample](GradientContext& c) -> absl::Status {
      if (!c.has_dY(0) || !c.wants(0)) return absl::OkStatus();
      c.SetInputGrad(0, EmitForwardGrad(c, "ResizeGrad", {{"upsample", GradientContext::Int(upsample ? 1 : 0)}}));
      return absl::OkStatus();
    });
  }
  r.Add("Where", [](GradientContext& c) {  // the condition (input 0) has no gradient
    std::string zero = c.ScalarLike(0.0, c.dY(0));
    if (c.wants(1))
      c.SetInputGrad(1, c.SumToShapeOf(c.Emit1("Where", {c.X(0), c.dY(0), zero}), c.X(1)));
    if (c.wants(2))
      c.SetInputGrad(2, c.SumToShapeOf(c.Emit1("Where", {c.X(0), zero, c.dY(0)}), c.X(2)));
    return absl::OkStatus();
  });

  // min/max are attributes before opset 11 and optional inputs (differentiable) after.
  r.Add("Clip", [](GradientContext& c) {
    std::vector<std::string> in = {c.dY(0), c.X(0)};
    std::map<std::string, Attribute> attrs;
    if (c.opset() < 11) {
      if (c.node().has_attr("min")) attrs["min"] = GradientContext::Float(c.node().attr_float("min", 0.f));
      if (c.node().has_attr("max")) attrs["max"] = GradientContext::Float(c.node().attr_float("max", 0.f));
    } else {
      in.push_back(c.X(1));
      in.push_back(c.X(2));
      while (in.back().empty()) in.pop_back();
    }
    const bool bounds = c.opset() >= 11 && (c.wants(1) || c.wants(2));
    std::vector<std::string> g = c.Emit("ClipGrad", in, bounds ? 3 : 1, attrs, kTandemDomain);
    c.SetInputGrad(0, g[0]);
    if (bounds) {
      if (c.wants(1)) c.SetInputGrad(1, g[1]);
      if (c.wants(2)) c.SetInputGrad(2, g[2]);
    }
    return absl::OkStatus();
  });

  r.Add("Cast", [](GradientContext& c) -> absl::Status {
    DataType t = c.graph().ValueType(c.X(0));
    if (t != DataType::kUndefined) {
      if (!IsFloat(t)) return absl::OkStatus();  // integer inputs have no gradient
      c.SetInputGrad(0, c.Emit1("Cast", {c.dY(0)}, {{"to", GradientContext::Int(static_cast<int64_t>(t))}}));
      return absl::OkStatus();
    }
    if (c.opset() < 15)
      return absl::UnimplementedError("Cast gradient needs the input's element type (unknown here)");
    c.SetInputGrad(0, c.Emit1("CastLike", {c.dY(0), c.X(0)}));
    return absl::OkStatus();
  });

  // Dropout only drops (and scales) in training mode, which exists from opset 12
  // (training_mode input), and with a ratio above 0 (a model exported with its dropout set to
  // 0, as for fine-tuning without it); otherwise it is the identity, and its mask is not made.
  r.Add("Dropout", [](GradientContext& c) -> absl::Status {
    if (c.opset() < 12 || c.X(2).empty() || IsConstantZero(c, c.X(2)) || IsConstantZero(c, c.X(1))) {
      c.SetInputGrad(0, c.dY(0));
      return absl::OkStatus();
    }
    if (c.Y(1).empty())
      return absl::UnimplementedError(
          "Dropout in training mode needs its mask output (output 1) to be differentiated");
    c.SetInputGrad(0, c.Emit1("DropoutGrad", {c.dY(0), c.Y(1), c.X(1), c.X(2)}, {}, kTandemDomain));
    return absl::OkStatus();
  });
}

}  // namespace tandem::training::rules
