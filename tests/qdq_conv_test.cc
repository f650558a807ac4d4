// Static QDQ quantization on the CPU: convolutions (DequantizeLinear -> Conv -> QuantizeLinear,
// optimizer/onnx_rewrites/qdq_fusion.h) become QLinearConv on oneDNN's int8 convolution
// (VNNI/AMX; with weights' zero points, exact products) or, without VNNI, a float32
// convolution again (rewrites/qlinear_conv_in_float.h), MatMuls QLinearMatMul, Gemms exact
// integer products, residual sums and products (DequantizeLinear x2 -> Add/Mul -> QuantizeLinear)
// ai.tandem QLinearAdd/QLinearMul, functions between quantizations QLinearLookup tables, and
// per-tensor QuantizeLinear/DequantizeLinear run on vector loops; on channels-last CPUs they
// read and write channels-last. References are computed here from the quantized input the
// graph also returns: QLinearConv's definition with int64 sums (float32 requantization may put a
// value on the other side of a rounding boundary: at most one level, on a few values), the
// unfused float graph (the same bound), and the per-element float arithmetic of
// QuantizeLinear/DequantizeLinear/Add/Mul and the unfused functions (bit for bit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "tests/gemm_test_util.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using testing::PlainNode;

struct ConvCase {
  std::string name;
  int64_t C, M, H, k, stride, pad, group;
  bool relu;    // a Relu between the Conv and its QuantizeLinear (y zero point 0: a no-op)
  int y_zero;   // the output's zero point (uint8)
  bool bias;
  int w_zero = 0;  // the weights' zero point (not 0: exact products with VNNI, not oneDNN's int8 convolution)
};

Tensor Scalar(float v) { return Tensor::FromVector<float>({v}, {}); }
Tensor ScalarU8(int v) {
  Tensor t = Tensor::Host(DataType::kUint8, {});
  t.data<uint8_t>()[0] = static_cast<uint8_t>(v);
  return t;
}

int Count(const Session& s, const std::string& op) {
  int n = 0;
  for (const Node& node : s.graph().nodes) n += node.op_type == op;
  return n;
}

std::unique_ptr<Session> Load(const Graph& g, bool fusion) {
  SessionOptions o;
  o.providers = {"cpu"};
  o.num_threads = 2;
  o.fusion = fusion;
  auto s = Session::FromGraph(g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

// x -> QuantizeLinear -> DequantizeLinear -> Conv(DQ(w int8, per channel), DQ(b int32)) [-> Relu]
// -> QuantizeLinear -> yq; outputs yq and xq.
Graph QdqConvGraph(const ConvCase& c, float xs, int xz, const Tensor& w, const std::vector<float>& ws,
                   const std::vector<int32_t>& b, float ys, float bias_scale_factor = 1.f) {
  Graph g;
  g.name = "qdq_conv";
  g.opsets[""] = 17;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({1, c.C, c.H, c.H})}};
  std::vector<float> bs(ws.size());
  for (size_t m = 0; m < ws.size(); ++m) bs[m] = xs * ws[m] * bias_scale_factor;
  Tensor wz = Tensor::Host(DataType::kInt8, {c.M});
  for (int64_t m = 0; m < c.M; ++m) wz.data<int8_t>()[m] = static_cast<int8_t>(c.w_zero ? c.w_zero + m % 3 : 0);
  g.initializers = {{"xs", Scalar(xs)}, {"xz", ScalarU8(xz)}, {"w", w},
                    {"ws", Tensor::FromVector<float>(ws, {c.M})}, {"wz", wz},
                    {"b", Tensor::FromVector<int32_t>(b, {c.M})}, {"bs", Tensor::FromVector<float>(bs, {c.M})},
                    {"ys", Scalar(ys)}, {"yz", ScalarU8(c.y_zero)}};
  g.nodes.push_back(PlainNode("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}));
  g.nodes.push_back(PlainNode("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}));
  Node dw = PlainNode("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
  dw.attributes["axis"] = IntAttribute(0);
  g.nodes.push_back(dw);
  std::vector<std::string> conv_in = {"xd", "wd"};
  if (c.bias) {
    Node db = PlainNode("DequantizeLinear", {"b", "bs"}, {"bd"});
    db.attributes["axis"] = IntAttribute(0);
    g.nodes.push_back(db);
    conv_in.push_back("bd");
  }
  Node conv = PlainNode("Conv", conv_in, {"conv"});
  conv.attributes["strides"] = IntsAttribute({c.stride, c.stride});
  conv.attributes["pads"] = IntsAttribute({c.pad, c.pad, c.pad, c.pad});
  conv.attributes["group"] = IntAttribute(c.group);
  g.nodes.push_back(conv);
  if (c.relu) g.nodes.push_back(PlainNode("Relu", {"conv"}, {"act"}));
  g.nodes.push_back(PlainNode("QuantizeLinear", {c.relu ? "act" : "conv", "ys", "yz"}, {"yq"}));
  g.outputs = {ValueInfo{"yq", DataType::kUint8, Shape::Unknown()}, ValueInfo{"xq", DataType::kUint8, Shape::Unknown()}};
  return g;
}

TEST(QdqConv, FusedConvolutionsMatchQLinearConvsDefinition) {
  for (const ConvCase& c : {ConvCase{"3x3, pad 1", 32, 48, 12, 3, 1, 1, 1, false, 117, true},
                            ConvCase{"3x3, stride 2, a Relu before a zero point of 0", 16, 32, 13, 3, 2, 1, 1, true, 0, true},
                            ConvCase{"1x1, no bias", 64, 40, 7, 1, 1, 0, 1, false, 3, false},
                            ConvCase{"an image's first layer: 3 channels, 7x7, stride 2", 3, 16, 20, 7, 2, 3, 1, false, 100, true},
                            ConvCase{"depthwise 3x3", 24, 24, 10, 3, 1, 1, 24, false, 128, true},
                            ConvCase{"2 groups", 16, 32, 9, 3, 1, 1, 2, false, 90, true},
                            ConvCase{"weights' zero points 5..7 per channel", 16, 24, 9, 3, 1, 1, 1, false, 110, true, 5},
                            ConvCase{"depthwise, weights' zero points", 12, 12, 8, 3, 2, 1, 12, false, 128, true, -2}}) {
    SCOPED_TRACE(c.name);
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> w8(-127, 127), b32(-3000, 3000);
    std::uniform_real_distribution<float> u(-1.f, 2.f), wsd(0.002f, 0.01f);
    const int64_t Cg = c.C / c.group, taps = c.k * c.k;
    Tensor w = Tensor::Host(DataType::kInt8, {c.M, Cg, c.k, c.k});
    for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(w8(rng));
    std::vector<float> ws(c.M);
    for (float& v : ws) v = wsd(rng);
    std::vector<int32_t> b(c.M);
    for (int32_t& v : b) v = b32(rng);
    const float xs = 3.f / 255.f, ys = 0.02f * std::sqrt(static_cast<float>(Cg * taps));
    const int xz = 85;
    const Graph g = QdqConvGraph(c, xs, xz, w, ws, b, ys);
    auto fused = Load(g, true);
    auto plain = Load(g, false);
    ASSERT_TRUE(fused && plain);
    // With VNNI/AMX one QLinearConv; without, its float form (rewrites/qlinear_conv_in_float.h):
    // one float convolution between a DequantizeLinear and a QuantizeLinear, the Relu gone.
    const int convs = Count(*fused, "Conv") + Count(*fused, "FusedConv");
    EXPECT_EQ(Count(*fused, "QLinearConv"), cpu::Int8DotProductsExact() ? 1 : 0);
    EXPECT_EQ(convs, cpu::Int8DotProductsExact() ? 0 : 1);
    EXPECT_EQ(Count(*fused, "Relu"), 0);
    EXPECT_EQ(Count(*plain, "QLinearConv"), 0);
    std::vector<float> x(c.C * c.H * c.H);
    for (float& v : x) v = u(rng);
    const Tensor xt = Tensor::FromVector<float>(x, {1, c.C, c.H, c.H});
    auto got = fused->Run({{"x", xt}});
    auto unfused = plain->Run({{"x", xt}});
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_TRUE(unfused.ok()) << unfused.status();
    const uint8_t* xq = (*got)[1].data<uint8_t>();
    const Tensor& y = (*got)[0];
    const int64_t O = (c.H + 2 * c.pad - c.k) / c.stride + 1;
    ASSERT_EQ(y.dims(), (Dims{1, c.M, O, O}));
    int64_t off_by_one = 0, unfused_differ = 0;
    for (int64_t m = 0; m < c.M; ++m) {
      const int64_t g0 = m / (c.M / c.group) * Cg;
      const double mult = static_cast<float>((xs * ws[m]) / ys);
      for (int64_t oy = 0; oy < O; ++oy)
        for (int64_t ox = 0; ox < O; ++ox) {
          int64_t acc = c.bias ? b[m] : 0;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t ky = 0; ky < c.k; ++ky)
              for (int64_t kx = 0; kx < c.k; ++kx) {
                const int64_t iy = oy * c.stride - c.pad + ky, ix = ox * c.stride - c.pad + kx;
                if (iy < 0 || iy >= c.H || ix < 0 || ix >= c.H) continue;
                acc += (static_cast<int64_t>(xq[((g0 + ci) * c.H + iy) * c.H + ix]) - xz) *
                       (w.data<int8_t>()[((m * Cg + ci) * c.k + ky) * c.k + kx] - (c.w_zero ? c.w_zero + m % 3 : 0));
              }
          const double want = std::min(255.0, std::max(0.0, std::nearbyint(acc * mult) + c.y_zero));
          const int64_t i = (m * O + oy) * O + ox;
          const int have = y.data<uint8_t>()[i];
          ASSERT_LE(std::abs(have - want), 1.0) << "channel " << m << " at " << oy << "," << ox << ": sum " << acc;
          off_by_one += have != want;
          const int other = (*unfused)[0].data<uint8_t>()[i];
          ASSERT_LE(std::abs(have - other), 1) << "the unfused graph, channel " << m;
          unfused_differ += have != other;
        }
    }
    EXPECT_LE(off_by_one * 100, y.numel()) << "more than 1% one level off";
    EXPECT_LE(unfused_differ * 20, y.numel()) << "more than 5% one level from the unfused graph";
  }
}

// DequantizeLinear(a), DequantizeLinear(b per column) -> MatMul -> QuantizeLinear is one
// QLinearMatMul, whose exact sums and double requantization give its definition bit for bit.
TEST(QdqConv, FusedMatMulsMatchQLinearMatMulsDefinition) {
  constexpr int64_t B = 2, S = 5, K = 600, N = 40;  // K past one float32 block of 512
  std::mt19937 rng(4);
  std::uniform_int_distribution<int> w8(-127, 127);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Tensor w = Tensor::Host(DataType::kInt8, {K, N});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(w8(rng));
  std::vector<float> ws(N);
  for (int64_t j = 0; j < N; ++j) ws[j] = 0.001f + 0.0002f * static_cast<float>(j % 9);
  Tensor wz = Tensor::Host(DataType::kInt8, {N});
  for (int64_t j = 0; j < N; ++j) wz.data<int8_t>()[j] = 0;
  const float xs = 2.f / 255.f, ys = 0.05f;
  const int xz = 128, yz = 120;
  Graph g;
  g.name = "qdq_matmul";
  g.opsets[""] = 17;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({B, S, K})}};
  g.initializers = {{"xs", Scalar(xs)}, {"xz", ScalarU8(xz)}, {"w", w}, {"ws", Tensor::FromVector<float>(ws, {N})},
                    {"wz", wz}, {"ys", Scalar(ys)}, {"yz", ScalarU8(yz)}};
  g.nodes.push_back(PlainNode("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}));
  g.nodes.push_back(PlainNode("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}));
  g.nodes.push_back(PlainNode("DequantizeLinear", {"w", "ws", "wz"}, {"wd"}));  // axis 1: per column
  g.nodes.push_back(PlainNode("MatMul", {"xd", "wd"}, {"m"}));
  g.nodes.push_back(PlainNode("QuantizeLinear", {"m", "ys", "yz"}, {"yq"}));
  g.outputs = {ValueInfo{"yq", DataType::kUint8, Shape::Unknown()}, ValueInfo{"xq", DataType::kUint8, Shape::Unknown()}};
  auto s = Load(g, true);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Count(*s, "QLinearMatMul"), 1);
  EXPECT_EQ(Count(*s, "MatMul"), 0);
  std::vector<float> x(B * S * K);
  for (float& v : x) v = u(rng);
  auto out = s->Run({{"x", Tensor::FromVector<float>(x, {B, S, K})}});
  ASSERT_TRUE(out.ok()) << out.status();
  const uint8_t* xq = (*out)[1].data<uint8_t>();
  ASSERT_EQ((*out)[0].dims(), (Dims{B, S, N}));
  for (int64_t r = 0; r < B * S; ++r)
    for (int64_t j = 0; j < N; ++j) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (static_cast<int64_t>(xq[r * K + k]) - xz) * w.data<int8_t>()[k * N + j];
      const double mult = static_cast<float>((xs * ws[j]) / ys);
      const double want = std::min(255.0, std::max(0.0, std::nearbyint(static_cast<double>(acc) * mult) + yz));
      ASSERT_EQ((*out)[0].data<uint8_t>()[r * N + j], want) << "row " << r << ", column " << j;
    }
}

// DequantizeLinear(a), DequantizeLinear(b, transB) -> Gemm(+ int32 bias) is MatMulInteger ->
// Cast -> Mul -> Add (one MatMulIntegerToFloat on the CPU): float(exact sum) * (a_scale *
// b_scale) + bias, bit for bit.
TEST(QdqConv, FusedGemmsAreExactIntegerProductsScaled) {
  constexpr int64_t M = 3, K = 700, N = 24;
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> w8(-127, 127), b32(-5000, 5000);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Tensor w = Tensor::Host(DataType::kInt8, {N, K});  // transB
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(w8(rng));
  std::vector<float> ws(N), bs(N);
  std::vector<int32_t> b(N);
  const float xs = 2.f / 255.f;
  for (int64_t n = 0; n < N; ++n) {
    ws[n] = 0.002f + 0.0003f * static_cast<float>(n % 5);
    bs[n] = xs * ws[n];
    b[n] = b32(rng);
  }
  Graph g;
  g.name = "qdq_gemm";
  g.opsets[""] = 17;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({M, K})}};
  g.initializers = {{"xs", Scalar(xs)}, {"xz", ScalarU8(128)}, {"w", w}, {"ws", Tensor::FromVector<float>(ws, {N})},
                    {"b", Tensor::FromVector<int32_t>(b, {N})}, {"bs", Tensor::FromVector<float>(bs, {N})}};
  g.nodes.push_back(PlainNode("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}));
  g.nodes.push_back(PlainNode("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}));
  Node dw = PlainNode("DequantizeLinear", {"w", "ws"}, {"wd"});
  dw.attributes["axis"] = IntAttribute(0);
  g.nodes.push_back(dw);
  Node db = PlainNode("DequantizeLinear", {"b", "bs"}, {"bd"});
  db.attributes["axis"] = IntAttribute(0);
  g.nodes.push_back(db);
  Node gemm = PlainNode("Gemm", {"xd", "wd", "bd"}, {"y"});
  gemm.attributes["transB"] = IntAttribute(1);
  g.nodes.push_back(gemm);
  g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Unknown()}, ValueInfo{"xq", DataType::kUint8, Shape::Unknown()}};
  auto s = Load(g, true);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Count(*s, "Gemm") + Count(*s, "FusedGemm"), 0);
  EXPECT_EQ(Count(*s, "MatMulIntegerToFloat"), 1);
  std::vector<float> x(M * K);
  for (float& v : x) v = u(rng);
  auto out = s->Run({{"x", Tensor::FromVector<float>(x, {M, K})}});
  ASSERT_TRUE(out.ok()) << out.status();
  const uint8_t* xq = (*out)[1].data<uint8_t>();
  for (int64_t r = 0; r < M; ++r)
    for (int64_t n = 0; n < N; ++n) {
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (static_cast<int64_t>(xq[r * K + k]) - 128) * w.data<int8_t>()[n * K + k];
      const float bias = static_cast<float>(b[n]) * bs[n];
      const float want = static_cast<float>(static_cast<int32_t>(acc)) * (xs * ws[n]) + bias;
      ASSERT_EQ((*out)[0].data<float>()[r * N + n], want) << "row " << r << ", column " << n;
    }
}

TEST(QdqConv, PatternsThatWouldChangeTheResultStayUnfused) {
  const ConvCase relu{"a Relu before a zero point of 10", 8, 8, 6, 3, 1, 1, 1, true, 10, true};
  const ConvCase plain{"a bias scale that is not x_scale * w_scale", 8, 8, 6, 3, 1, 1, 1, false, 10, true};
  Tensor w = Tensor::Host(DataType::kInt8, {8, 8, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(i % 17 - 8);
  const std::vector<float> ws(8, 0.01f);
  const std::vector<int32_t> b(8, 100);
  for (const auto& [c, factor] : {std::pair{relu, 1.f}, std::pair{plain, 1.5f}}) {
    SCOPED_TRACE(c.name);
    auto s = Load(QdqConvGraph(c, 0.01f, 128, w, ws, b, 0.05f, factor), true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Count(*s, "QLinearConv"), 0);
  }
}

// QuantizeLinear of float v with one scale and zero point, as its definition reads in
// float32 arithmetic: saturate(round_half_even(v / scale) + zero_point).
int QuantizeRef(float v, float scale, int zero, int lo, int hi) {
  const float q = std::nearbyint(v / scale) + static_cast<float>(zero);
  return static_cast<int>(std::min<float>(hi, std::max<float>(lo, q)));
}

TEST(QdqConv, QuantizedAddAndMulMatchTheirNodesBitForBit) {
  struct AddCase {
    std::string name;
    Dims b_dims;
    bool int8_out;
    bool mul = false;  // QLinearMul
  };
  for (const AddCase& c : {AddCase{"same shapes, uint8", {2, 16, 9, 9}, false},
                           AddCase{"same shapes, int8 output", {2, 16, 9, 9}, true},
                           AddCase{"B broadcast over the spatial dims", {1, 16, 1, 1}, false},
                           AddCase{"B over the trailing dims (a bias)", {9, 9}, false},
                           AddCase{"B over the trailing dims, int8 output", {1, 16, 9, 9}, true},
                           AddCase{"a product, same shapes", {2, 16, 9, 9}, false, true},
                           AddCase{"a product by a per-channel gate (squeeze-and-excitation)", {1, 16, 1, 1}, false, true},
                           AddCase{"a product over the trailing dims, int8 output", {16, 9, 9}, true, true}}) {
    SCOPED_TRACE(c.name);
    const Dims a_dims = {2, 16, 9, 9};
    const float as = 0.031f, bs = 0.017f, cs = 0.043f;
    const int az = 120, bz = 7, cz = c.int8_out ? -5 : 131;
    Graph g;
    g.name = "qdq_add";
    g.opsets[""] = 17;
    g.inputs = {ValueInfo{"a", DataType::kFloat, Shape::Of(a_dims)}, ValueInfo{"b", DataType::kFloat, Shape::Of(c.b_dims)}};
    Tensor czt = Tensor::Host(c.int8_out ? DataType::kInt8 : DataType::kUint8, {});
    if (c.int8_out) czt.data<int8_t>()[0] = static_cast<int8_t>(cz);
    else czt.data<uint8_t>()[0] = static_cast<uint8_t>(cz);
    g.initializers = {{"as", Scalar(as)}, {"az", ScalarU8(az)}, {"bs", Scalar(bs)},
                      {"bz", ScalarU8(bz)}, {"cs", Scalar(cs)}, {"cz", czt}};
    g.nodes.push_back(PlainNode("QuantizeLinear", {"a", "as", "az"}, {"aq"}));
    g.nodes.push_back(PlainNode("QuantizeLinear", {"b", "bs", "bz"}, {"bq"}));
    g.nodes.push_back(PlainNode("DequantizeLinear", {"aq", "as", "az"}, {"ad"}));
    g.nodes.push_back(PlainNode("DequantizeLinear", {"bq", "bs", "bz"}, {"bd"}));
    g.nodes.push_back(PlainNode(c.mul ? "Mul" : "Add", {"ad", "bd"}, {"sum"}));
    g.nodes.push_back(PlainNode("QuantizeLinear", {"sum", "cs", "cz"}, {"cq"}));
    g.outputs = {ValueInfo{"cq", czt.dtype(), Shape::Unknown()}, ValueInfo{"aq", DataType::kUint8, Shape::Unknown()},
                 ValueInfo{"bq", DataType::kUint8, Shape::Unknown()}};
    auto s = Load(g, true);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Count(*s, c.mul ? "QLinearMul" : "QLinearAdd"), 1);
    EXPECT_EQ(Count(*s, "Add") + Count(*s, "Mul"), 0);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-4.f, 4.f);
    std::vector<float> a(NumElements(a_dims)), b(NumElements(c.b_dims));
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    auto out = s->Run({{"a", Tensor::FromVector<float>(a, a_dims)}, {"b", Tensor::FromVector<float>(b, c.b_dims)}});
    ASSERT_TRUE(out.ok()) << out.status();
    const uint8_t* aq = (*out)[1].data<uint8_t>();
    const uint8_t* bq = (*out)[2].data<uint8_t>();
    const int64_t plane = 81, b_per_channel = NumElements(c.b_dims) == 16, nb = NumElements(c.b_dims);
    for (int64_t i = 0; i < NumElements(a_dims); ++i) {
      const int64_t bi = b_per_channel ? i / plane % 16 : i % nb;
      const float fa = (static_cast<float>(aq[i]) - static_cast<float>(az)) * as;
      const float fb = (static_cast<float>(bq[bi]) - static_cast<float>(bz)) * bs;
      const float sum = c.mul ? fa * fb : fa + fb;
      const int want = c.int8_out ? QuantizeRef(sum, cs, cz, -128, 127) : QuantizeRef(sum, cs, cz, 0, 255);
      const int have = c.int8_out ? (*out)[0].data<int8_t>()[i] : (*out)[0].data<uint8_t>()[i];
      ASSERT_EQ(have, want) << "element " << i;
    }
  }
}

// DequantizeLinear -> f -> QuantizeLinear is one QLinearLookup whose table constant folding
// makes with the graph's own kernels: the unfused graph's bytes exactly, and within one level
// of f evaluated here in double.
TEST(QdqConv, FunctionsBetweenQuantizationsAreLookupsOfTheSameBytes) {
  struct Fn {
    std::string op;
    double (*ref)(double);
    bool int8;
  };
  for (const Fn& f : {Fn{"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, false},
                      Fn{"HardSigmoid", [](double v) { return std::min(1.0, std::max(0.0, 0.2 * v + 0.5)); }, true},
                      Fn{"Tanh", [](double v) { return std::tanh(v); }, true}}) {
    SCOPED_TRACE(f.op);
    const float xs = 0.05f, ys = 1.f / 255.f;
    const int xz = f.int8 ? -3 : 120, yz = f.int8 ? -128 : 0;
    auto zero = [&](int v) {
      Tensor t = Tensor::Host(f.int8 ? DataType::kInt8 : DataType::kUint8, {});
      static_cast<uint8_t*>(t.raw())[0] = static_cast<uint8_t>(v);
      return t;
    };
    Graph g;
    g.name = "qdq_lookup";
    g.opsets[""] = 17;
    g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({3, 700})}};
    g.initializers = {{"xs", Scalar(xs)}, {"xz", zero(xz)}, {"ys", Scalar(f.op == "Tanh" ? 2.f / 255.f : ys)},
                      {"yz", zero(f.op == "Tanh" ? 0 : yz)}};
    g.nodes.push_back(PlainNode("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}));
    g.nodes.push_back(PlainNode("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"}));
    g.nodes.push_back(PlainNode(f.op, {"xd"}, {"f"}));
    g.nodes.push_back(PlainNode("QuantizeLinear", {"f", "ys", "yz"}, {"yq"}));
    const DataType t = f.int8 ? DataType::kInt8 : DataType::kUint8;
    g.outputs = {ValueInfo{"yq", t, Shape::Unknown()}, ValueInfo{"xq", t, Shape::Unknown()}};
    auto fused = Load(g, true);
    auto plain = Load(g, false);
    ASSERT_TRUE(fused && plain);
    EXPECT_EQ(Count(*fused, "QLinearLookup"), 1);
    EXPECT_EQ(Count(*fused, f.op), 0);
    std::vector<float> x(3 * 700);
    for (size_t i = 0; i < x.size(); ++i) x[i] = -7.f + 14.f * static_cast<float>(i) / static_cast<float>(x.size());
    const Tensor xt = Tensor::FromVector<float>(x, {3, 700});
    auto got = fused->Run({{"x", xt}});
    auto want = plain->Run({{"x", xt}});
    ASSERT_TRUE(got.ok() && want.ok());
    const float out_scale = f.op == "Tanh" ? 2.f / 255.f : ys;
    const int out_zero = f.op == "Tanh" ? 0 : yz;
    for (size_t i = 0; i < x.size(); ++i) {
      const auto byte = [&](const Tensor& v, size_t k) {
        return f.int8 ? static_cast<int>(v.data<int8_t>()[k]) : static_cast<int>(v.data<uint8_t>()[k]);
      };
      ASSERT_EQ(byte((*got)[0], i), byte((*want)[0], i)) << "x = " << x[i];
      const double xv = (byte((*got)[1], i) - xz) * static_cast<double>(xs);
      const double level = std::nearbyint(f.ref(xv) / out_scale) + out_zero;
      const double lo = f.int8 ? -128 : 0, hi = f.int8 ? 127 : 255;
      ASSERT_LE(std::fabs(byte((*got)[0], i) - std::min(hi, std::max(lo, level))), 1.0) << "x = " << x[i];
    }
  }
}

TEST(QdqConv, PerTensorQuantizeAndDequantizeMatchTheDefinitionBitForBit) {
  const float scale = 0.05f;
  std::vector<float> x;
  for (int i = -6000; i <= 6000; ++i) x.push_back(static_cast<float>(i) * 0.0125f);  // many exact halfway points
  for (float v : {1e30f, -1e30f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  6.4e6f, -6.4e6f})
    x.push_back(v);
  const Dims dims = {static_cast<int64_t>(x.size())};
  for (const bool to_int8 : {false, true}) {
    SCOPED_TRACE(to_int8 ? "int8" : "uint8");
    const int zero = to_int8 ? -3 : 140, lo = to_int8 ? -128 : 0, hi = to_int8 ? 127 : 255;
    Tensor zp = Tensor::Host(to_int8 ? DataType::kInt8 : DataType::kUint8, {});
    if (to_int8) zp.data<int8_t>()[0] = static_cast<int8_t>(zero);
    else zp.data<uint8_t>()[0] = static_cast<uint8_t>(zero);
    Graph g;
    g.name = "q_dq";
    g.opsets[""] = 17;
    g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of(dims)}};
    g.initializers = {{"s", Scalar(scale)}, {"z", zp}};
    g.nodes.push_back(PlainNode("QuantizeLinear", {"x", "s", "z"}, {"q"}));
    g.nodes.push_back(PlainNode("DequantizeLinear", {"q", "s", "z"}, {"d"}));
    g.outputs = {ValueInfo{"q", zp.dtype(), Shape::Unknown()}, ValueInfo{"d", DataType::kFloat, Shape::Unknown()}};
    auto s = Load(g, true);
    ASSERT_NE(s, nullptr);
    auto out = s->Run({{"x", Tensor::FromVector<float>(x, dims)}});
    ASSERT_TRUE(out.ok()) << out.status();
    for (size_t i = 0; i < x.size(); ++i) {
      const int want = QuantizeRef(x[i], scale, zero, lo, hi);
      const int have = to_int8 ? (*out)[0].data<int8_t>()[i] : (*out)[0].data<uint8_t>()[i];
      ASSERT_EQ(have, want) << "x = " << x[i];
      ASSERT_EQ((*out)[1].data<float>()[i], static_cast<float>(want - zero) * scale) << "x = " << x[i];
    }
  }
}

// A QDQ residual block (two convolutions and a quantized sum) gives the same values in the
// channels-last layout the CPU provider picks on AVX-512 machines and in the plain one.
TEST(QdqConv, ChannelsLastAndPlainLayoutsAgree) {
  const int64_t C = 32, H = 14;
  Graph g;
  g.name = "qdq_block";
  g.opsets[""] = 17;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({1, C, H, H})}};
  Tensor w = Tensor::Host(DataType::kInt8, {C, C, 3, 3});
  for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 255 - 127);
  Tensor wz = Tensor::Host(DataType::kInt8, {C});
  for (int64_t m = 0; m < C; ++m) wz.data<int8_t>()[m] = 0;
  g.initializers = {{"s", Scalar(0.02f)}, {"z", ScalarU8(100)}, {"s1", Scalar(0.3f)}, {"z0", ScalarU8(0)},
                    {"w", w}, {"ws", Tensor::FromVector<float>(std::vector<float>(C, 0.004f), {C})}, {"wz", wz}};
  auto add = [&](Node n) { g.nodes.push_back(std::move(n)); };
  add(PlainNode("QuantizeLinear", {"x", "s", "z"}, {"xq"}));
  add(PlainNode("DequantizeLinear", {"xq", "s", "z"}, {"xd"}));
  Node dw = PlainNode("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
  dw.attributes["axis"] = IntAttribute(0);
  add(dw);
  for (const char* i : {"1", "2"}) {
    const std::string in = std::string(i) == "1" ? "xd" : "h1d";
    Node conv = PlainNode("Conv", {in, "wd"}, {std::string("c") + i});
    conv.attributes["pads"] = IntsAttribute({1, 1, 1, 1});
    add(conv);
    add(PlainNode("QuantizeLinear", {std::string("c") + i, "s1", "z0"}, {std::string("h") + i}));
    add(PlainNode("DequantizeLinear", {std::string("h") + i, "s1", "z0"}, {std::string("h") + i + "d"}));
  }
  add(PlainNode("Add", {"h2d", "xd"}, {"sum"}));
  add(PlainNode("QuantizeLinear", {"sum", "s1", "z0"}, {"yq"}));
  add(PlainNode("DequantizeLinear", {"yq", "s1", "z0"}, {"y"}));
  g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Unknown()}};
  std::vector<float> x(C * H * H);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 2.f;
  const Tensor xt = Tensor::FromVector<float>(x, {1, C, H, H});
  std::vector<Tensor> outs;
  for (const char* layout : {"nhwc", "nchw"}) {
    setenv("TANDEM_CPU_CONV_LAYOUT", layout, 1);
    auto s = Load(g, true);
    unsetenv("TANDEM_CPU_CONV_LAYOUT");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(Count(*s, "QLinearConv"), cpu::Int8DotProductsExact() ? 2 : 0);
    EXPECT_EQ(Count(*s, "QLinearAdd"), 1);
    auto out = s->Run({{"x", xt}});
    ASSERT_TRUE(out.ok()) << layout << ": " << out.status();
    outs.push_back((*out)[0]);
  }
  ASSERT_EQ(outs[0].numel(), outs[1].numel());
  for (int64_t i = 0; i < outs[0].numel(); ++i)
    ASSERT_NEAR(outs[0].data<float>()[i], outs[1].data<float>()[i], 0.3f * 1.01f) << "element " << i;
}

}  // namespace
}  // namespace tandem
