// quantize_dynamic's layer (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by the scales'
// product [-> Add of the bias]) on the CPU becomes one ai.tandem MatMulIntegerToFloat
// (providers/cpu/rewrites/integer_matmul_to_float.h) whose output is the nodes' own bit for
// bit: compared with float(int64 sums) * scale [+ bias] computed here from the quantized A the
// graph also returns. Per-tensor scale and zero points with a bias; per-column weight scales
// and zero points (quantize_dynamic's per_channel) without; and a scale shaped [M, 1], which
// would broadcast differently, left unfused (and still right); and a scale whose shape
// inference did not record (as in dynamo exports), known from how it is made.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/gemm_test_util.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using testing::PlainNode;

constexpr int64_t kM = 6, kK = 700, kN = 24;  // K past one float32 block of 512

struct Case {
  std::string name;
  Dims scale_dims;  // of the weights' scale (and zero point when per column)
  bool bias;
  bool fused;  // expected
  bool scale_shape_recorded = true;  // else found from DynamicQuantizeLinear's scale times a constant
};

TEST(MatMulIntegerToFloat, QuantizeDynamicLayersMatchTheirNodesBitForBit) {
  for (const Case& c : {Case{"per-tensor scales, a bias", {}, true, true},
                        Case{"per-column weight scales and zero points", {kN}, false, true},
                        Case{"a scale shaped [M, 1]: left alone", {kM, 1}, true, false},
                        Case{"per-column scales, their product's shape not recorded", {kN}, true, true, false}}) {
    SCOPED_TRACE(c.name);
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> w8(-128, 127);
    std::uniform_real_distribution<float> u(-2.f, 3.f);
    Tensor w = Tensor::Host(DataType::kInt8, {kK, kN});
    for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>(w8(rng));
    const bool per_column = c.scale_dims == Dims{kN};
    Tensor ws = Tensor::Host(DataType::kFloat, c.scale_dims), wz = Tensor::Host(DataType::kInt8, per_column ? Dims{kN} : Dims{});
    for (int64_t i = 0; i < ws.numel(); ++i) ws.data<float>()[i] = 0.01f + 0.003f * static_cast<float>(i % 7);
    for (int64_t i = 0; i < wz.numel(); ++i) wz.data<int8_t>()[i] = static_cast<int8_t>(per_column ? i % 5 - 2 : 3);
    std::vector<float> bias_v(kN);
    for (float& v : bias_v) v = u(rng);
    Graph g;
    g.name = "int8_layer";
    g.opsets[""] = 13;
    g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({kM, kK})}};
    g.initializers = {{"w", w}, {"ws", ws}, {"wz", wz}};
    g.nodes.push_back(PlainNode("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"}));
    g.nodes.push_back(PlainNode("MatMulInteger", {"xq", "w", "xz", "wz"}, {"sums"}));
    Node cast = PlainNode("Cast", {"sums"}, {"sums_f"});
    cast.attributes["to"] = IntAttribute(static_cast<int64_t>(DataType::kFloat));
    g.nodes.push_back(cast);
    g.nodes.push_back(PlainNode("Mul", {"xs", "ws"}, {"s"}));
    g.nodes.push_back(PlainNode("Mul", {"sums_f", "s"}, {"y0"}));
    if (c.scale_shape_recorded) g.value_info["s"] = ValueInfo{"s", DataType::kFloat, Shape::Of(c.scale_dims)};
    std::string y = "y0";
    if (c.bias) {
      g.initializers["b"] = Tensor::FromVector<float>(bias_v, {kN});
      g.nodes.push_back(PlainNode("Add", {"b", "y0"}, {"y"}));
      y = "y";
    }
    g.outputs = {ValueInfo{y, DataType::kFloat, Shape::Unknown()}, ValueInfo{"xq", DataType::kUint8, Shape::Unknown()},
                 ValueInfo{"xs", DataType::kFloat, Shape::Unknown()}, ValueInfo{"xz", DataType::kUint8, Shape::Unknown()}};
    auto session = CpuSession(g);
    ASSERT_NE(session, nullptr);
    int fused = 0, casts = 0;
    for (const Node& n : session->graph().nodes) fused += n.op_type == "MatMulIntegerToFloat", casts += n.op_type == "Cast";
    EXPECT_EQ(fused, c.fused ? 1 : 0);
    EXPECT_EQ(casts, c.fused ? 0 : 1);
    std::vector<float> x(kM * kK);
    for (float& v : x) v = u(rng);
    auto out = session->Run({{"x", Tensor::FromVector<float>(x, {kM, kK})}});
    ASSERT_TRUE(out.ok()) << out.status();
    const uint8_t* xq = (*out)[1].data<uint8_t>();
    const float xs = (*out)[2].data<float>()[0];
    const int64_t xz = (*out)[3].data<uint8_t>()[0];
    const float* got = (*out)[0].data<float>();
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        int64_t sum = 0;
        const int64_t z = wz.data<int8_t>()[per_column ? j : 0];
        for (int64_t k = 0; k < kK; ++k) sum += (xq[i * kK + k] - xz) * (w.data<int8_t>()[k * kN + j] - z);
        const float scale = xs * ws.data<float>()[c.scale_dims.empty() ? 0 : per_column ? j : i];
        const float product = static_cast<float>(static_cast<int32_t>(sum)) * scale;
        const float want = c.bias ? bias_v[j] + product : product;
        ASSERT_EQ(got[i * kN + j], want) << "row " << i << ", column " << j;
      }
  }
}

}  // namespace
}  // namespace tandem
