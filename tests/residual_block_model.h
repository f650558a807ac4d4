// A residual block as an ONNX model and its float64 reference, for tests of the
// convolutions a session fuses (the residual join folded into a convolution, a strided one
// after it): x [N, c, h, h] (N symbolic) ->
//   s = Relu(Conv3x3(x, w0) + b0); r = Relu(Conv3x3(s, w1) + b1 + s); y = Conv3x3 stride 2 (r, w2) + b2,
// every convolution padded 1, with m output channels. Weights and biases are initializers of
// InitializerValues (test_models.h) with the spec's scale and offset; b2 is the graph input
// "bias" [m] where the spec has none.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/conv_reference.h"
#include "tests/test_models.h"

namespace tandem::testing {

struct ResidualBlock {
  struct Values {
    float scale, offset = 0.f;
  };
  int64_t c, m, h;
  Values w0, b0, w1, b1, w2;
  std::optional<Values> b2;  // none: the graph input "bias"
  int64_t out_h() const { return (h - 1) / 2 + 1; }
};

inline onnx::ModelProto ResidualBlockModel(const ResidualBlock& r, const std::string& name) {
  onnx::ModelProto model = EmptyModel(13, name);
  auto* g = model.mutable_graph();
  auto* x = g->add_input();
  SetFloatType(x, "x", {1, r.c, r.h, r.h});
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  AddFloatInitializer(g, "w0", {r.m, r.c, 3, 3}, r.w0.scale, r.w0.offset);
  AddFloatInitializer(g, "b0", {r.m}, r.b0.scale, r.b0.offset);
  AddFloatInitializer(g, "w1", {r.m, r.m, 3, 3}, r.w1.scale, r.w1.offset);
  AddFloatInitializer(g, "b1", {r.m}, r.b1.scale, r.b1.offset);
  AddFloatInitializer(g, "w2", {r.m, r.m, 3, 3}, r.w2.scale, r.w2.offset);
  if (r.b2)
    AddFloatInitializer(g, "b2", {r.m}, r.b2->scale, r.b2->offset);
  else
    SetFloatType(g->add_input(), "bias", {r.m});
  AddPaddedConv(g, "conv0", {"x", "w0", "b0"}, "c0", 1);
  AddNode(g, "Relu", "relu0", {"c0"}, {"s"});
  AddPaddedConv(g, "conv1", {"s", "w1", "b1"}, "c1", 1);
  AddNode(g, "Add", "add", {"c1", "s"}, {"a"});
  AddNode(g, "Relu", "relu1", {"a"}, {"r"});
  AddIntsAttribute(AddPaddedConv(g, "conv2", {"r", "w2", r.b2 ? "b2" : "bias"}, "y", 1), "strides", {2, 2});
  auto* y = g->add_output();
  SetFloatType(y, "y", {1, r.m, r.out_h(), r.out_h()});
  y->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  return model;
}

// y for x [N, c, h, h] in float64; `bias` is b2 where the spec has none.
inline std::vector<double> ResidualBlockReference(const ResidualBlock& r, const std::vector<double>& x, int64_t N,
                                                  const std::vector<double>& bias = {}) {
  auto values = [](int64_t n, ResidualBlock::Values v) { return InitializerValues(n, v.scale, v.offset); };
  int64_t h = 0;
  auto s = Conv2d(x, N, r.c, r.h, values(r.m * r.c * 9, r.w0), values(r.m, r.b0), r.m, 3, 1, 1, &h);
  Relu(s);
  auto y = Conv2d(s, N, r.m, h, values(r.m * r.m * 9, r.w1), values(r.m, r.b1), r.m, 3, 1, 1, &h);
  for (size_t i = 0; i < y.size(); ++i) y[i] += s[i];
  Relu(y);
  return Conv2d(y, N, r.m, h, values(r.m * r.m * 9, r.w2), r.b2 ? values(r.m, *r.b2) : bias, r.m, 3, 2, 1, &h);
}

}  // namespace tandem::testing
