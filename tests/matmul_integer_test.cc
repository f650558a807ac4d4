// MatMulInteger (providers/cpu/kernels/quantization/matmul_integer.cc, int8_matmul.h) against
// int64 sums written here, bit for bit: uint8 and int8 A and B in every pairing, zero points per
// tensor, per row of A and per column of B, the extremes (255 x -128 over 1300 terms: past
// 2^24, where float32 blocks of K must stay exact, and past 16-bit pair sums, where 8-bit dot
// products without VNNI saturate), A with batch dims against a 2-D B, B a constant and a graph
// input, and a batched B (the reference loop); QLinearMatMul on the same sums. ctest's skinny_gemm_avx2 / _sse41 runs it capped:
// the float32-block path there, oneDNN's int8 matmul here where the CPU has VNNI or AMX.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

struct Operand {
  DataType type;
  Dims dims;
  int fill;  // 0: random; 1: the type's largest; -1: its smallest
};

Tensor Make8Bit(const Operand& o, uint32_t seed) {
  Tensor t = Tensor::Host(o.type, o.dims);
  std::mt19937 rng(seed);
  const int lo = o.type == DataType::kUint8 ? 0 : -128, hi = o.type == DataType::kUint8 ? 255 : 127;
  std::uniform_int_distribution<int> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int v = o.fill > 0 ? hi : o.fill < 0 ? lo : u(rng);
    if (o.type == DataType::kUint8) t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    else t.data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  return t;
}

int64_t Value(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUint8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

// Y [batch.., M, N] in int64, wrapped to int32 as the op's int32 output does. B's batch
// (rank 3) matches A's when given.
std::vector<int32_t> Reference(const Tensor& a, const Tensor& b, const Tensor* azp, const Tensor* bzp) {
  const int64_t K = a.dim(-1), M = a.dim(-2), N = b.dim(-1), batch = a.numel() / (M * K);
  std::vector<int32_t> y;
  for (int64_t o = 0; o < batch; ++o)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const int64_t za = !azp ? 0 : Value(*azp, azp->numel() == 1 ? 0 : i);
        const int64_t zb = !bzp ? 0 : Value(*bzp, bzp->numel() == 1 ? 0 : j);
        const int64_t b0 = b.rank() == 3 ? o * K * N : 0;
        int64_t sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += (Value(a, (o * M + i) * K + k) - za) * (Value(b, b0 + k * N + j) - zb);
        y.push_back(static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum))));
      }
  return y;
}

struct Case {
  std::string name;
  Operand a, b;
  int zp;  // 0: none; 1: per tensor; 2: per row of A and per column of B
  bool b_constant;
};

TEST(MatMulInteger, MatchesInt64SumsBitForBit) {
  const DataType u8 = DataType::kUint8, s8 = DataType::kInt8;
  const std::vector<Case> cases = {
      {"u8 x s8, per-tensor zero points (quantize_dynamic's)", {u8, {2, 7, 600}, 0}, {s8, {600, 33}, 0}, 1, true},
      {"u8 x u8, per-row and per-column zero points", {u8, {9, 40}, 0}, {u8, {40, 17}, 0}, 2, true},
      {"s8 x s8, B a graph input", {s8, {5, 70}, 0}, {s8, {70, 12}, 0}, 1, false},
      {"s8 x u8, no zero points", {s8, {4, 3, 8}, 0}, {u8, {8, 6}, 0}, 0, true},
      {"255 x -128 over 1300 terms", {u8, {3, 1300}, 1}, {s8, {1300, 5}, -1}, 0, true},
      {"-128 x -128 over 1300 terms", {s8, {2, 1300}, -1}, {s8, {1300, 4}, -1}, 0, false},
      {"255 x 255 less zero point 0 over 1300 terms", {u8, {2, 1300}, 1}, {u8, {1300, 3}, 1}, 1, true},
      {"a batched B", {u8, {3, 4, 20}, 0}, {s8, {3, 20, 6}, 0}, 2, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + (cpu::Int8DotProductsExact() ? " (oneDNN int8)" : " (float32 blocks)"));
    const Tensor a = Make8Bit(c.a, 1), b = Make8Bit(c.b, 2);
    const int64_t M = c.a.dims[c.a.dims.size() - 2], N = c.b.dims.back();
    Tensor azp, bzp;
    if (c.zp) {
      azp = Make8Bit({c.a.type, c.zp == 1 ? Dims{} : Dims{M}, 0}, 3);
      bzp = Make8Bit({c.b.type, c.zp == 1 ? Dims{} : Dims{N}, 0}, 4);
    }
    Node node;
    node.name = "mmi";
    node.op_type = "MatMulInteger";
    node.inputs = {"a", "b"};
    if (c.zp) node.inputs.insert(node.inputs.end(), {"azp", "bzp"});
    node.outputs = {"y"};
    std::vector<ValueInfo> inputs = {ValueInfo{"a", c.a.type, Shape::Unknown()}};
    std::map<std::string, Tensor> initializers, feeds = {{"a", a}};
    if (c.b_constant) initializers["b"] = b;
    else inputs.push_back(ValueInfo{"b", c.b.type, Shape::Unknown()}), feeds["b"] = b;
    if (c.zp) initializers["azp"] = azp, initializers["bzp"] = bzp;
    Graph g;
    g.name = "mmi";
    g.opsets[""] = 13;
    g.inputs = inputs;
    g.initializers = initializers;
    g.nodes.push_back(node);
    g.outputs.push_back(ValueInfo{"y", DataType::kInt32, Shape::Unknown()});
    auto s = CpuSession(g);
    ASSERT_NE(s, nullptr);
    const std::vector<int32_t> want = Reference(a, b, c.zp ? &azp : nullptr, c.zp ? &bzp : nullptr);
    for (int run = 0; run < 2; ++run) {  // a constant B prepared once, then reused
      auto y = s->Run(feeds);
      ASSERT_TRUE(y.ok()) << y.status();
      ASSERT_EQ((*y)[0].numel(), static_cast<int64_t>(want.size()));
      const int32_t* got = (*y)[0].data<int32_t>();
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i << ", run " << run;
    }
  }
}

// QLinearMatMul with a 2-D B (its sums from Int8MatMul) against the definition written here:
// saturate(round_half_even(int64 sum * float(a_scale * b_scale / y_scale)) + y_zero_point),
// per-row A and per-column B parameters, uint8 and int8 outputs, values that saturate.
TEST(MatMulInteger, QLinearMatMulWithOneBMatchesTheDefinition) {
  const int64_t B = 2, M = 5, K = 600, N = 9;
  for (DataType y_type : {DataType::kUint8, DataType::kInt8}) {
    SCOPED_TRACE(y_type == DataType::kUint8 ? "uint8 output" : "int8 output");
    const Tensor a = Make8Bit({DataType::kUint8, {B, M, K}, 0}, 11), b = Make8Bit({DataType::kInt8, {K, N}, 0}, 12);
    const Tensor az = Make8Bit({DataType::kUint8, {M}, 0}, 13), bz = Make8Bit({DataType::kInt8, {N}, 0}, 14);
    std::vector<float> as(M), bs(N);
    for (int64_t i = 0; i < M; ++i) as[i] = 0.002f + 0.0007f * static_cast<float>(i);
    for (int64_t j = 0; j < N; ++j) bs[j] = 0.003f + 0.0011f * static_cast<float>(j);
    const float ys = 0.05f;
    Tensor yz = Tensor::Host(y_type, {});
    if (y_type == DataType::kUint8) yz.data<uint8_t>()[0] = 120;
    else yz.data<int8_t>()[0] = -7;
    Node node;
    node.name = "qmm";
    node.op_type = "QLinearMatMul";
    node.inputs = {"a", "as", "az", "b", "bs", "bz", "ys", "yz"};
    node.outputs = {"y"};
    Graph g;
    g.name = "qmm";
    g.opsets[""] = 13;
    g.inputs = {ValueInfo{"a", DataType::kUint8, Shape::Unknown()}};
    g.initializers = {{"as", Tensor::FromVector<float>(as, {M})}, {"az", az}, {"b", b},
                      {"bs", Tensor::FromVector<float>(bs, {N})}, {"bz", bz},
                      {"ys", Tensor::FromVector<float>({ys}, {})}, {"yz", yz}};
    g.nodes.push_back(node);
    g.outputs.push_back(ValueInfo{"y", y_type, Shape::Unknown()});
    auto s = CpuSession(g);
    ASSERT_NE(s, nullptr);
    auto y = s->Run({{"a", a}});
    ASSERT_TRUE(y.ok()) << y.status();
    const double lo = y_type == DataType::kUint8 ? 0 : -128, hi = y_type == DataType::kUint8 ? 255 : 127;
    int saturated = 0;
    for (int64_t r = 0; r < B * M; ++r)
      for (int64_t j = 0; j < N; ++j) {
        int64_t sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += (Value(a, r * K + k) - Value(az, r % M)) * (Value(b, k * N + j) - Value(bz, j));
        const float mult = (as[r % M] * bs[j]) / ys;
        const double q = std::nearbyint(static_cast<double>(sum) * static_cast<double>(mult)) + Value(yz, 0);
        saturated += q < lo || q > hi;
        ASSERT_EQ(Value((*y)[0], r * N + j), static_cast<int64_t>(std::min(std::max(q, lo), hi))) << r << ", " << j;
      }
    EXPECT_GT(saturated, 0) << "some outputs saturate";
  }
}

}  // namespace
}  // namespace tandem
