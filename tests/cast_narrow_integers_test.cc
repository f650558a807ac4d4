// Cast and CastLike to and from int4, uint4, int2 and uint2 (providers/cpu/kernels/tensor/
// cast_ops.cc, graph/low_precision.h) against values written here from the ONNX Cast spec,
// not from any package: a fixed-point value narrowed to a fixed-point type keeps its low
// bits, read in two's complement for the signed types (the spec's "200 (int16) -> -56
// (int8)"); bool gives {1, 0}; the narrow types widen exactly; a float in range truncates
// toward zero, as every float-to-integer Cast of the suite. A float out of range is
// undefined in the spec: Tandem's rule (truncate, then keep the low bits; NaN and
// infinities 0) is pinned here so that it changes only on purpose.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

Node CastNode(const std::string& name, const std::string& x, const std::string& y, DataType to) {
  Node cast;
  cast.name = name;
  cast.op_type = "Cast";
  cast.inputs = {x};
  cast.outputs = {y};
  cast.attributes["to"] = IntAttribute(static_cast<int64_t>(to));
  return cast;
}

// x (of x's type) -> Cast(to = narrow) -> Cast(to = int64) -> y, at opset 25 (int2's first).
// With `like`, the first Cast is a CastLike whose second input is a narrow constant.
std::vector<int64_t> CastThroughNarrow(const Tensor& x, DataType narrow, bool like = false) {
  Graph g;
  g.name = "cast_narrow";
  g.opsets[""] = 25;
  g.inputs = {ValueInfo{"x", x.dtype(), Shape::Unknown()}};
  Node first = CastNode("to_narrow", "x", "n", narrow);
  if (like) {
    first.op_type = "CastLike";
    first.attributes.clear();
    first.inputs.push_back("like");
    g.initializers["like"] = Tensor::Host(narrow, {1});
  }
  g.nodes = {first, CastNode("to_int64", "n", "y", DataType::kInt64)};
  g.outputs = {ValueInfo{"y", DataType::kInt64, Shape::Unknown()}};
  auto s = CpuSession(g);
  if (!s) return {};
  auto out = s->Run({{"x", x}});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return (*out)[0].ToInt64Vector();
}

TEST(CastNarrowIntegers, FixedPointNarrowingKeepsTheLowBits) {
  // Values chosen by their bits: 200 = 0b11001000, -9 = ...11110111, 6 = 0b110.
  const std::vector<int64_t> v = {0, 1, 7, 8, 9, 15, 16, 17, 200, -1, -8, -9, -56, 6,
                                  (int64_t{1} << 60) + 5,  // beyond double's 53 bits
                                  std::numeric_limits<int64_t>::min() + 3, std::numeric_limits<int64_t>::max()};
  const Tensor x = Tensor::FromVector(v, {static_cast<int64_t>(v.size())});
  EXPECT_EQ(CastThroughNarrow(x, DataType::kInt4),
            (std::vector<int64_t>{0, 1, 7, -8, -7, -1, 0, 1, -8, -1, -8, 7, -8, 6, 5, 3, -1}));
  EXPECT_EQ(CastThroughNarrow(x, DataType::kUint4),
            (std::vector<int64_t>{0, 1, 7, 8, 9, 15, 0, 1, 8, 15, 8, 7, 8, 6, 5, 3, 15}));
  EXPECT_EQ(CastThroughNarrow(x, DataType::kInt2),
            (std::vector<int64_t>{0, 1, -1, 0, 1, -1, 0, 1, 0, -1, 0, -1, 0, -2, 1, -1, -1}));
  EXPECT_EQ(CastThroughNarrow(x, DataType::kUint2),
            (std::vector<int64_t>{0, 1, 3, 0, 1, 3, 0, 1, 0, 3, 0, 3, 0, 2, 1, 3, 3}));
  // CastLike takes the same path.
  EXPECT_EQ(CastThroughNarrow(x, DataType::kInt4, /*like=*/true), CastThroughNarrow(x, DataType::kInt4));
}

TEST(CastNarrowIntegers, NarrowSourcesOfEveryWidth) {
  // uint8 255 and 250 (0b11111010), int16 -200 (...00111000), uint64 2^63 + 9, bool.
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector<uint8_t>({255, 250, 16}, {3}), DataType::kInt4),
            (std::vector<int64_t>{-1, -6, 0}));
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector<int16_t>({-200, 200}, {2}), DataType::kUint4),
            (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector<uint64_t>({(uint64_t{1} << 63) + 9}, {1}), DataType::kInt4),
            (std::vector<int64_t>{-7}));
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector<bool>({true, false}, {2}), DataType::kInt2),
            (std::vector<int64_t>{1, 0}));
  // Between narrow types: int4 -> uint2 keeps the low two bits of -7 (0b1001) and 6.
  Tensor int4 = Tensor::Host(DataType::kInt4, {2});
  int4.data<uint8_t>()[0] = static_cast<uint8_t>(-7);
  int4.data<uint8_t>()[1] = 6;
  EXPECT_EQ(CastThroughNarrow(int4, DataType::kUint2), (std::vector<int64_t>{1, 2}));
}

TEST(CastNarrowIntegers, NarrowTypesWidenExactly) {
  for (DataType t : {DataType::kInt4, DataType::kUint4, DataType::kInt2, DataType::kUint2}) {
    const bool is_signed = t == DataType::kInt4 || t == DataType::kInt2;
    const int bits = (t == DataType::kInt4 || t == DataType::kUint4) ? 4 : 2;
    const int lo = is_signed ? -(1 << (bits - 1)) : 0, hi = is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
    Tensor x = Tensor::Host(t, {hi - lo + 1});
    std::vector<float> want;
    for (int v = lo; v <= hi; ++v) {
      x.data<uint8_t>()[v - lo] = static_cast<uint8_t>(v);
      want.push_back(static_cast<float>(v));
    }
    Graph g;
    g.name = "widen";
    g.opsets[""] = 25;
    g.inputs = {ValueInfo{"x", t, Shape::Unknown()}};
    g.nodes = {CastNode("widen", "x", "y", DataType::kFloat)};
    g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Unknown()}};
    auto s = CpuSession(g);
    ASSERT_NE(s, nullptr);
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + y.numel()), want) << DataTypeName(t);
  }
}

TEST(CastNarrowIntegers, FloatsTruncateTowardZero) {
  // In range (defined): truncation, as Cast FLOAT -> INT32 and the suite's in-range elements.
  const std::vector<float> in_range = {0.f, 0.9f, -0.9f, 3.7f, -3.7f, 7.99f, -8.f, -8.9f, 6.5f};
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector(in_range, {9}), DataType::kInt4),
            (std::vector<int64_t>{0, 0, 0, 3, -3, 7, -8, -8, 6}));
  const std::vector<float> unsigned_range = {0.f, 0.5f, 14.9f, 15.f, -0.7f};
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector(unsigned_range, {5}), DataType::kUint4),
            (std::vector<int64_t>{0, 0, 14, 15, 0}));
  // float16 takes the same rule: 1.5 -> 1, -2.5 -> -2.
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector<Float16>({Float16(1.5f), Float16(-2.5f)}, {2}), DataType::kInt2),
            (std::vector<int64_t>{1, -2}));
}

TEST(CastNarrowIntegers, OutOfRangeFloatsFollowTandemsRule) {
  // Undefined in the spec; Tandem truncates, then keeps the low bits (9 -> -7, -9.5 -> -9 ->
  // 7, 16.5 -> 0, 100 -> 4); NaN, infinities and |x| >= 2^63 give 0.
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {9.f, -9.5f, 16.5f, 100.f, -20.f, inf, -inf, NAN, 1e19f, -1e19f};
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector(x, {10}), DataType::kInt4),
            (std::vector<int64_t>{-7, 7, 0, 4, -4, 0, 0, 0, 0, 0}));
  EXPECT_EQ(CastThroughNarrow(Tensor::FromVector(x, {10}), DataType::kUint4),
            (std::vector<int64_t>{9, 7, 0, 4, 12, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace tandem
