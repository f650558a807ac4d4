// ConvInteger (providers/cpu/kernels/nn/conv.cc: one group as per-image products of the
// weights and the input's columns, quantization/conv_columns.h and int8_matmul.h) against
// int64 sums over the definition written here, bit for bit: 1-D and 2-D, strides, pads
// (which hold the input's zero point: they add nothing), dilations, uint8 and int8 inputs, a
// per-channel weight zero point, two images; two groups (the reference loop). ctest's
// skinny_gemm_avx2 / _sse41 run it capped: the float32-block products there.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

struct Case {
  std::string name;
  DataType x_type, w_type;
  Dims x_dims, w_dims;  // [N, C, spatial...], [M, C / group, kernel...]
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  bool w_zp_per_channel;
};

int64_t At(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kUint8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

Tensor Random8(DataType type, const Dims& dims, uint32_t seed) {
  Tensor t = Tensor::Host(type, dims);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(type == DataType::kUint8 ? 0 : -128, type == DataType::kUint8 ? 255 : 127);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (type == DataType::kUint8) t.data<uint8_t>()[i] = static_cast<uint8_t>(u(rng));
    else t.data<int8_t>()[i] = static_cast<int8_t>(u(rng));
  }
  return t;
}

TEST(ConvInteger, MatchesInt64SumsBitForBit) {
  const DataType u8 = DataType::kUint8, s8 = DataType::kInt8;
  for (const Case& c : {Case{"1-D, stride 2, pads, uint8 x int8 (Whisper's front)", u8, s8, {2, 8, 30}, {12, 8, 3},
                             {2}, {1, 1}, {1}, 1, false},
                        Case{"2-D, dilation 2, uneven pads, per-channel weight zero point", s8, s8, {1, 5, 9, 11},
                             {7, 5, 3, 2}, {1, 2}, {2, 0, 1, 1}, {2, 1}, 1, true},
                        Case{"2-D, two groups (the reference loop)", u8, u8, {1, 4, 6, 6}, {6, 2, 3, 3}, {1, 1},
                             {1, 1, 1, 1}, {1, 1}, 2, false}}) {
    SCOPED_TRACE(c.name);
    const int64_t rank = static_cast<int64_t>(c.x_dims.size()) - 2, M = c.w_dims[0];
    const Tensor x = Random8(c.x_type, c.x_dims, 1), w = Random8(c.w_type, c.w_dims, 2);
    const Tensor xz = Random8(c.x_type, {}, 3), wz = Random8(c.w_type, c.w_zp_per_channel ? Dims{M} : Dims{}, 4);
    Node node;
    node.name = "conv";
    node.op_type = "ConvInteger";
    node.inputs = {"x", "w", "xz", "wz"};
    node.outputs = {"y"};
    node.attributes["strides"] = IntsAttribute(c.strides);
    node.attributes["pads"] = IntsAttribute(c.pads);
    node.attributes["dilations"] = IntsAttribute(c.dilations);
    node.attributes["group"] = IntAttribute(c.group);
    Graph g;
    g.name = "conv_integer";
    g.opsets[""] = 13;
    g.inputs = {ValueInfo{"x", c.x_type, Shape::Unknown()}};
    g.initializers = {{"w", w}, {"xz", xz}, {"wz", wz}};
    g.nodes.push_back(node);
    g.outputs.push_back(ValueInfo{"y", DataType::kInt32, Shape::Unknown()});
    auto s = CpuSession(g);
    ASSERT_NE(s, nullptr);
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    // The definition: each output sums (x - xz) * (w - wz) over its window, padding adding nothing.
    const int64_t N = c.x_dims[0], C = c.x_dims[1], Cg = c.w_dims[1];
    Dims in(c.x_dims.begin() + 2, c.x_dims.end()), k(c.w_dims.begin() + 2, c.w_dims.end()), o;
    for (int64_t d = 0; d < rank; ++d)
      o.push_back((in[d] + c.pads[d] + c.pads[d + rank] - c.dilations[d] * (k[d] - 1) - 1) / c.strides[d] + 1);
    Dims want_dims = {N, M};
    want_dims.insert(want_dims.end(), o.begin(), o.end());
    ASSERT_EQ(y.dims(), want_dims);
    while (in.size() < 2) in.push_back(1), k.push_back(1), o.push_back(1);
    const int64_t s1 = rank > 1 ? c.strides[1] : 1, d1 = rank > 1 ? c.dilations[1] : 1, p1 = rank > 1 ? c.pads[1] : 0;
    int64_t i_out = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t a = 0; a < o[0]; ++a)
          for (int64_t b = 0; b < o[1]; ++b, ++i_out) {
            const int64_t grp = m / (M / c.group), zw = At(wz, c.w_zp_per_channel ? m : 0);
            int64_t sum = 0;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t ka = 0; ka < k[0]; ++ka)
                for (int64_t kb = 0; kb < k[1]; ++kb) {
                  const int64_t ia = a * c.strides[0] - c.pads[0] + ka * c.dilations[0], ib = b * s1 - p1 + kb * d1;
                  if (ia < 0 || ia >= in[0] || ib < 0 || ib >= in[1]) continue;
                  const int64_t cx = grp * Cg + ci;
                  sum += (At(x, ((n * C + cx) * in[0] + ia) * in[1] + ib) - At(xz, 0)) *
                         (At(w, ((m * Cg + ci) * k[0] + ka) * k[1] + kb) - zw);
                }
            ASSERT_EQ(y.data<int32_t>()[i_out], static_cast<int32_t>(sum)) << "output " << i_out;
          }
  }
}

}  // namespace
}  // namespace tandem
