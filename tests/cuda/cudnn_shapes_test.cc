// The CUDA provider's host-side convolution arithmetic (providers/cuda/cudnn_shapes.h):
// what cuDNN's descriptors are given for ONNX Conv shapes and attributes, checked against
// sizes worked out by hand. No GPU and no cuDNN call needed.
#include "providers/cuda/cudnn_shapes.h"

#include <gtest/gtest.h>

#include "graph/node.h"

namespace tandem::cuda {
namespace {

absl::StatusOr<CudnnConvShape> ShapeOf(const Dims& x, const Dims& w, const Node& n) {
  auto g = ComputeWindowGeometry(n, Dims(x.begin() + 2, x.end()), std::vector<int64_t>(w.begin() + 2, w.end()), false);
  if (!g.ok()) return g.status();
  return CudnnConvShapeOf(x, w, *g, n.attr_int("group", 1));
}

Node Conv(std::map<std::string, Attribute> attrs) {
  Node n;
  n.op_type = "Conv";
  n.attributes = std::move(attrs);
  return n;
}

TEST(CudnnConvShape, TwoDimensionalPaddedConvolution) {
  auto s = ShapeOf({2, 3, 32, 32}, {8, 3, 3, 3}, Conv({{"pads", IntsAttribute({1, 1, 1, 1})}}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->onnx_y_dims, (Dims{2, 8, 32, 32}));
  EXPECT_EQ(s->x_dims, (std::vector<int>{2, 3, 32, 32}));
  EXPECT_EQ(s->x_strides, (std::vector<int>{3072, 1024, 32, 1}));
  EXPECT_EQ(s->y_strides, (std::vector<int>{8192, 1024, 32, 1}));
  EXPECT_EQ(s->w_dims, (std::vector<int>{8, 3, 3, 3}));
  EXPECT_EQ(s->b_dims, (std::vector<int>{1, 8, 1, 1}));
  EXPECT_EQ(s->b_strides, (std::vector<int>{8, 1, 1, 1}));
  EXPECT_EQ(s->pads, (std::vector<int>{1, 1}));
  EXPECT_EQ(s->strides, (std::vector<int>{1, 1}));
  EXPECT_EQ(s->groups, 1);
}

// cuDNN takes 2 or 3 spatial dims: a 1-D convolution gets a unit height with no padding.
TEST(CudnnConvShape, OneDimensionalConvolutionGetsAUnitHeight) {
  auto s = ShapeOf({4, 2, 10}, {6, 2, 3}, Conv({{"strides", IntsAttribute({2})}}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->onnx_y_dims, (Dims{4, 6, 4}));  // (10 - 3) / 2 + 1
  EXPECT_EQ(s->x_dims, (std::vector<int>{4, 2, 1, 10}));
  EXPECT_EQ(s->y_dims, (std::vector<int>{4, 6, 1, 4}));
  EXPECT_EQ(s->w_dims, (std::vector<int>{6, 2, 1, 3}));
  EXPECT_EQ(s->pads, (std::vector<int>{0, 0}));
  EXPECT_EQ(s->strides, (std::vector<int>{1, 2}));
  EXPECT_EQ(s->dilations, (std::vector<int>{1, 1}));
}

TEST(CudnnConvShape, DepthwiseGroupsAndDilation) {
  auto s = ShapeOf({1, 4, 9, 9}, {4, 1, 3, 3},
                   Conv({{"group", IntAttribute(4)}, {"dilations", IntsAttribute({2, 2})}}));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->groups, 4);
  EXPECT_EQ(s->onnx_y_dims, (Dims{1, 4, 5, 5}));  // 9 - ((3 - 1) * 2 + 1) + 1
  EXPECT_EQ(s->dilations, (std::vector<int>{2, 2}));
}

// Plans are cached by Key(): shapes that differ anywhere get their own.
TEST(CudnnConvShape, KeysDifferWithShapeAndWindow) {
  auto a = ShapeOf({1, 3, 8, 8}, {4, 3, 3, 3}, Conv({}));
  auto b = ShapeOf({2, 3, 8, 8}, {4, 3, 3, 3}, Conv({}));
  auto c = ShapeOf({1, 3, 8, 8}, {4, 3, 3, 3}, Conv({{"strides", IntsAttribute({2, 2})}}));
  auto d = ShapeOf({1, 3, 8, 8}, {4, 3, 3, 3}, Conv({}));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_NE(a->Key(), b->Key());
  EXPECT_NE(a->Key(), c->Key());
  EXPECT_EQ(a->Key(), d->Key());
}

TEST(CudnnConvShape, RefusesWhatCudnnCannotSay) {
  // One pad per spatial dim: asymmetric padding, explicit or from SAME with an even kernel.
  auto asym = ShapeOf({1, 1, 5, 5}, {1, 1, 3, 3}, Conv({{"pads", IntsAttribute({0, 0, 1, 1})}}));
  EXPECT_EQ(asym.status().code(), absl::StatusCode::kUnimplemented) << asym.status();
  auto same = ShapeOf({1, 1, 5, 5}, {1, 1, 2, 2}, Conv({{"auto_pad", StringAttribute("SAME_UPPER")}}));
  EXPECT_EQ(same.status().code(), absl::StatusCode::kUnimplemented) << same.status();
  auto four = ShapeOf({1, 1, 3, 3, 3, 3}, {1, 1, 1, 1, 1, 1}, Conv({}));
  EXPECT_EQ(four.status().code(), absl::StatusCode::kUnimplemented) << four.status();
  auto channels = ShapeOf({1, 3, 5, 5}, {2, 2, 3, 3}, Conv({}));
  EXPECT_EQ(channels.status().code(), absl::StatusCode::kInvalidArgument) << channels.status();
}

// Pools: cuDNN's floor output size, and an empty output when the window is larger than
// the padded input (a fused 2x2 pool over a one-row convolution).
TEST(CudnnPoolShape, FloorSizesAndEmptyOutputs) {
  WindowGeometry g;
  g.kernel = g.strides = {2, 2};
  g.dilations = {1, 1};
  g.pads_begin = g.pads_end = {0, 0};
  g.out = {2, 3};
  auto s = CudnnPoolShapeOf({1, 4, 5, 7}, g);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->onnx_y_dims, (Dims{1, 4, 2, 3}));
  EXPECT_EQ(s->window, (std::vector<int>{2, 2}));
  g.out = {0, 3};
  auto empty = CudnnPoolShapeOf({1, 4, 1, 7}, g);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(NumElements(empty->onnx_y_dims), 0);
  g.out = {3, 3};  // a ceil-mode window past the floor size
  EXPECT_EQ(CudnnPoolShapeOf({1, 4, 5, 7}, g).status().code(), absl::StatusCode::kUnimplemented);
  g.out = {2, 3};
  g.dilations = {2, 1};
  EXPECT_EQ(CudnnPoolShapeOf({1, 4, 5, 7}, g).status().code(), absl::StatusCode::kUnimplemented);
}

// Softmax as cuDNN's channel softmax of [outer, n, inner, 1]: one axis from opset 13,
// every dim from the axis on before it (coerce).
TEST(CudnnSoftmaxShape, AxisAndCoerce) {
  auto one_axis = CudnnSoftmaxShapeOf({2, 3, 4, 5}, 1, false);
  ASSERT_TRUE(one_axis.ok()) << one_axis.status();
  EXPECT_EQ(one_axis->dims, (std::vector<int>{2, 3, 20, 1}));
  EXPECT_EQ(one_axis->strides, (std::vector<int>{60, 20, 1, 1}));
  auto last = CudnnSoftmaxShapeOf({2, 3, 4, 5}, -1, false);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->dims, (std::vector<int>{24, 5, 1, 1}));
  auto coerced = CudnnSoftmaxShapeOf({2, 3, 4, 5}, 1, true);
  ASSERT_TRUE(coerced.ok());
  EXPECT_EQ(coerced->dims, (std::vector<int>{2, 60, 1, 1}));
  EXPECT_EQ(CudnnSoftmaxShapeOf({2, 3}, 2, false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudnnSoftmaxShapeOf({}, 0, false).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tandem::cuda
