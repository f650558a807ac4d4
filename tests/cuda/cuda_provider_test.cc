// The CUDA provider against the CPU provider on the same inputs: every CUDA kernel
// (forward and gradient ops), device residency, and training parity. Needs a GPU: on a
// machine without one (or without libtandem_cuda.so) every test reports itself SKIPPED
// with the reason, and ctest counts the target as skipped, never as passed; with
// TANDEM_REQUIRE_GPU=1 (GPU verification runs) each of them fails instead, so a plugin
// that cannot load is a failure there, not a skip. Models: ModelPath (cuda_test_util.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "framework/plugin/provider_plugin.h"
#include "onnx_import/import.h"
#include "placement/device_selection.h"
#include "runtime/session.h"
#include "tests/cuda/cuda_test_util.h"
#include "training/trainer.h"

namespace tandem {
namespace {

struct NodeCase {
  std::string domain, op;
  std::vector<std::pair<std::string, Tensor>> inputs;  // name -> value (int64 = host inputs)
  std::map<std::string, Attribute> attrs;
  int outputs = 1;
  int opset = 13;
  DataType output_type = DataType::kFloat;  // of y0 (later outputs: float)
};

Graph SingleNode(const NodeCase& c) {
  Graph g;
  g.name = c.op;
  g.opsets[""] = c.opset;
  g.opsets["ai.tandem"] = 1;
  Node n;
  n.name = "n";
  n.op_type = c.op;
  n.domain = c.domain;
  n.attributes = c.attrs;
  for (const auto& [name, t] : c.inputs) {
    n.inputs.push_back(name);
    if (t.dtype() == DataType::kFloat) g.inputs.push_back(ValueInfo{name, t.dtype(), Shape::Of(t.dims())});
    else g.initializers[name] = t;  // shapes, axes: constants, as exporters write them
  }
  for (int i = 0; i < c.outputs; ++i) {
    n.outputs.push_back("y" + std::to_string(i));
    ValueInfo vi;
    vi.name = n.outputs.back();
    vi.dtype = i == 0 ? c.output_type : DataType::kFloat;
    g.outputs.push_back(vi);
  }
  g.nodes.push_back(n);
  return g;
}

// Runs the case on {cuda, cpu} and {cpu}; the node must have run on the GPU and agree.
void ExpectMatchesCpu(const NodeCase& c, double rtol = 1e-5, double atol = 1e-6, const ProviderOptions& gpu_options = {}) {
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, t] : c.inputs)
    if (t.dtype() == DataType::kFloat) feeds[name] = t;
  SessionOptions gpu, cpu;
  gpu.providers = {"cuda", "cpu"};
  gpu.provider_options = gpu_options;
  gpu.constant_folding = cpu.constant_folding = false;
  auto sg = Session::FromGraph(SingleNode(c), gpu);
  ASSERT_TRUE(sg.ok()) << sg.status();
  EXPECT_EQ((*sg)->stats().placement.nodes_per_provider.count("cpu") ? (*sg)->stats().placement.nodes_per_provider.at("cpu") : 0, 0)
      << c.op << " fell back to the CPU";
  auto sc = Session::FromGraph(SingleNode(c), cpu);
  ASSERT_TRUE(sc.ok()) << sc.status();
  auto og = (*sg)->Run(feeds);
  ASSERT_TRUE(og.ok()) << og.status();
  auto oc = (*sc)->Run(feeds);
  ASSERT_TRUE(oc.ok()) << oc.status();
  for (size_t k = 0; k < oc->size(); ++k) {
    const Tensor& a = (*og)[k];
    const Tensor& b = (*oc)[k];
    ASSERT_EQ(a.device().type, DeviceType::kCpu);
    ASSERT_EQ(a.dims(), b.dims()) << c.op << " output " << k;
    ASSERT_EQ(a.dtype(), b.dtype()) << c.op << " output " << k;
    if (b.dtype() != DataType::kFloat) {  // Cast, comparisons, Where: exact
      for (int64_t i = 0; i < b.numel(); ++i)
        ASSERT_EQ(std::memcmp(static_cast<const char*>(a.raw()) + i * SizeOf(b.dtype()),
                              static_cast<const char*>(b.raw()) + i * SizeOf(b.dtype()), SizeOf(b.dtype())), 0)
            << c.op << " output " << k << " element " << i;
      continue;
    }
    for (int64_t i = 0; i < b.numel(); ++i) {
      const double x = a.data<float>()[i], y = b.data<float>()[i];
      if (std::isnan(y) || std::isinf(y)) {  // NaN meets NaN, an infinity the same one
        ASSERT_TRUE(std::isnan(y) ? std::isnan(x) : x == y) << c.op << " output " << k << " element " << i << ": " << x;
        continue;
      }
      ASSERT_LE(std::fabs(x - y), atol + rtol * std::fabs(y)) << c.op << " output " << k << " element " << i;
    }
  }
}

Tensor Ints(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}); }

TEST(CudaKernels, UnaryActivations) {
  REQUIRE_GPU();
  for (const char* op : {"Relu", "Tanh", "Sigmoid", "Exp", "Neg", "Abs", "LeakyRelu", "Elu"})
    ExpectMatchesCpu({"", op, {{"x", Random({7, 33}, 1)}}});
  for (const char* op : {"Log", "Sqrt", "Reciprocal"}) ExpectMatchesCpu({"", op, {{"x", Random({7, 33}, 2, 0.1f, 3.f)}}});
}

TEST(CudaKernels, BroadcastingBinaryOps) {
  REQUIRE_GPU();
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    ExpectMatchesCpu({"", op, {{"a", Random({4, 5, 6}, 3)}, {"b", Random({4, 5, 6}, 4, 0.5f, 2.f)}}});
    ExpectMatchesCpu({"", op, {{"a", Random({4, 5, 6}, 5)}, {"b", Random({6}, 6, 0.5f, 2.f)}}});
    ExpectMatchesCpu({"", op, {{"a", Random({4, 1, 6}, 7)}, {"b", Random({5, 1}, 8, 0.5f, 2.f)}}});
  }
  ExpectMatchesCpu({"", "Pow", {{"a", Random({3, 9}, 9, 0.1f, 2.f)}, {"b", Random({9}, 10)}}}, 1e-5, 1e-5);
  ExpectMatchesCpu({"", "Sum", {{"a", Random({3, 4}, 11)}, {"b", Random({4}, 12)}, {"c", Random({3, 4}, 13)}}});
}

TEST(CudaKernels, GradientOps) {
  REQUIRE_GPU();
  for (const char* op : {"ReluGrad", "TanhGrad", "SigmoidGrad", "LeakyReluGrad"})
    ExpectMatchesCpu({"ai.tandem", op, {{"dy", Random({5, 17}, 14)}, {"y", Random({5, 17}, 15)}}});
  ExpectMatchesCpu({"ai.tandem", "SumToShape", {{"dy", Random({8, 3, 4}, 16)}, {"like", Random({3, 1}, 17)}}});
  ExpectMatchesCpu({"ai.tandem", "SumToShape", {{"dy", Random({1, 3}, 16)}, {"like", Random({3}, 17)}}});  // a reshape
  // An empty output of a long reduction (no parts to split into).
  ExpectMatchesCpu({"", "ReduceSum", {{"x", Random({0, 5000}, 179)}, {"axes", Ints({1})}}});
  // A bias gradient over the peaks MLP's 40,000 rows: summed in parts, then the parts.
  ExpectMatchesCpu({"ai.tandem", "SumToShape", {{"dy", Random({40000, 20}, 164)}, {"like", Random({20}, 165)}}},
                   1e-5, 1e-5);
  ExpectMatchesCpu({"ai.tandem", "MeanScale", {{"g", Random({2, 3}, 18)}, {"x", Random({6, 2, 3}, 19)}, {"y", Random({2, 3}, 20)}}});
}

TEST(CudaKernels, MseLossAndGradient) {
  REQUIRE_GPU();
  for (const char* r : {"mean", "sum", "none"}) {
    const std::map<std::string, Attribute> attrs = {{"reduction", StringAttribute(r)}};
    ExpectMatchesCpu({"ai.tandem", "MSELoss", {{"x", Random({40000, 1}, 44)}, {"t", Random({40000, 1}, 45)}}, attrs},
                     1e-5, 1e-6);
    const Tensor dy = std::string(r) == "none" ? Random({5, 3}, 46) : Random({}, 46);
    NodeCase grad{"ai.tandem", "MSELossGrad", {{"dy", dy}, {"x", Random({5, 3}, 47)}, {"t", Random({5, 3}, 48)}}, attrs};
    grad.outputs = 2;  // dX and dT
    ExpectMatchesCpu(grad);
  }
}

TEST(CudaKernels, Reductions) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "ReduceSum", {{"x", Random({6, 5, 40}, 21)}, {"axes", Ints({0, 2})}}});
  ExpectMatchesCpu({"", "ReduceMean", {{"x", Random({40000, 1}, 22)}}, {{"keepdims", IntAttribute(0)}}});
  ExpectMatchesCpu({"", "ReduceMean", {{"x", Random({3, 7, 5}, 23)}}, {{"axes", IntsAttribute({1})}}});
}

TEST(CudaKernels, ShapeAndMovement) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "Reshape", {{"x", Random({4, 6}, 24)}, {"shape", Ints({2, -1, 3})}}});
  ExpectMatchesCpu({"", "Flatten", {{"x", Random({2, 3, 4}, 25)}}});
  ExpectMatchesCpu({"", "Unsqueeze", {{"x", Random({2, 3}, 26)}, {"axes", Ints({0, 3})}}});
  ExpectMatchesCpu({"", "Expand", {{"x", Random({3, 1}, 27)}, {"shape", Ints({2, 3, 4})}}});
  ExpectMatchesCpu({"", "Transpose", {{"x", Random({2, 3, 4, 5}, 28)}}, {{"perm", IntsAttribute({0, 2, 3, 1})}}});
}

TEST(CudaKernels, MatMulAndGemm) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "MatMul", {{"a", Random({37, 19}, 29)}, {"b", Random({19, 23}, 30)}}}, 1e-4, 1e-5);
  ExpectMatchesCpu({"", "MatMul", {{"a", Random({3, 37, 19}, 31)}, {"b", Random({19, 23}, 32)}}}, 1e-4, 1e-5);
  ExpectMatchesCpu({"", "MatMul", {{"a", Random({3, 37, 19}, 33)}, {"b", Random({3, 19, 23}, 34)}}}, 1e-4, 1e-5);
  for (int ta : {0, 1})
    for (int tb : {0, 1}) {
      Tensor a = ta ? Random({19, 37}, 35) : Random({37, 19}, 35);
      Tensor b = tb ? Random({23, 19}, 36) : Random({19, 23}, 36);
      ExpectMatchesCpu({"", "Gemm", {{"a", a}, {"b", b}, {"c", Random({23}, 37)}},
                        {{"transA", IntAttribute(ta)}, {"transB", IntAttribute(tb)}}}, 1e-4, 1e-5);
    }
  ExpectMatchesCpu({"", "Gemm", {{"a", Random({8, 5}, 38)}, {"b", Random({5, 6}, 39)}, {"c", Random({8, 6}, 40)}},
                    {{"alpha", FloatAttribute(0.5f)}, {"beta", FloatAttribute(2.f)}}}, 1e-4, 1e-5);
  ExpectMatchesCpu({"ai.tandem", "FusedGemm", {{"a", Random({64, 20}, 41)}, {"b", Random({5, 20}, 42)}, {"c", Random({5}, 43)}},
                    {{"transB", IntAttribute(1)}, {"activation", StringAttribute("Relu")}}}, 1e-4, 1e-5);
}

Tensor Labels(Dims dims, int64_t classes, uint32_t seed) {
  Tensor t = Tensor::Host(DataType::kInt64, std::move(dims));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = static_cast<int64_t>(rng() % classes);
  return t;
}

TEST(CudaKernels, ConvolutionsAndPools) {
  REQUIRE_GPU();
  const std::map<std::string, Attribute> pad1 = {{"pads", IntsAttribute({1, 1, 1, 1})}};
  ExpectMatchesCpu({"", "Conv", {{"x", Random({2, 3, 9, 9}, 60)}, {"w", Random({4, 3, 3, 3}, 61)}, {"b", Random({4}, 62)}}, pad1},
                   1e-4, 1e-5);
  ExpectMatchesCpu({"", "Conv", {{"x", Random({2, 3, 10}, 63)}, {"w", Random({5, 3, 3}, 64)}},
                    {{"strides", IntsAttribute({2})}}}, 1e-4, 1e-5);  // 1-D
  ExpectMatchesCpu({"", "Conv", {{"x", Random({1, 4, 7, 7}, 65)}, {"w", Random({4, 1, 3, 3}, 66)}},
                    {{"group", IntAttribute(4)}, {"dilations", IntsAttribute({2, 2})}}}, 1e-4, 1e-5);  // depthwise
  for (const char* act : {"Relu", "Tanh", "Clip"}) {
    std::map<std::string, Attribute> a = pad1;
    a["activation"] = StringAttribute(act);
    a["activation_alpha"] = FloatAttribute(0.f);
    a["activation_beta"] = FloatAttribute(0.5f);
    ExpectMatchesCpu({"ai.tandem", "FusedConv", {{"x", Random({2, 3, 8, 8}, 67)}, {"w", Random({4, 3, 3, 3}, 68)},
                      {"b", Random({4}, 69)}}, a}, 1e-4, 1e-5);
  }
  std::map<std::string, Attribute> pooled = pad1;
  pooled["activation"] = StringAttribute("Relu");
  pooled["pool"] = StringAttribute("MaxPool2x2");
  ExpectMatchesCpu({"ai.tandem", "FusedConv", {{"x", Random({2, 3, 9, 9}, 70)}, {"w", Random({4, 3, 3, 3}, 71)},
                    {"b", Random({4}, 72)}}, pooled}, 1e-4, 1e-5);  // 9x9 -> 4x4: the odd row dropped
  ExpectMatchesCpu({"", "MaxPool", {{"x", Random({2, 3, 9, 9}, 73)}},
                    {{"kernel_shape", IntsAttribute({3, 3})}, {"strides", IntsAttribute({2, 2})}, {"pads", IntsAttribute({1, 1, 1, 1})}}});
  for (int include : {0, 1})
    ExpectMatchesCpu({"", "AveragePool", {{"x", Random({2, 3, 8, 8}, 74)}},
                      {{"kernel_shape", IntsAttribute({3, 3})}, {"pads", IntsAttribute({1, 1, 1, 1})},
                       {"count_include_pad", IntAttribute(include)}}});
  ExpectMatchesCpu({"", "GlobalAveragePool", {{"x", Random({2, 5, 7, 7}, 75)}}});
  ExpectMatchesCpu({"", "GlobalMaxPool", {{"x", Random({2, 5, 7, 7}, 76)}}});
}

TEST(CudaKernels, ConvolutionAndPoolGradients) {
  REQUIRE_GPU();
  NodeCase conv{"ai.tandem", "ConvGrad", {{"dy", Random({2, 4, 8, 8}, 77)}, {"x", Random({2, 3, 8, 8}, 78)},
                                          {"w", Random({4, 3, 3, 3}, 79)}}, {{"pads", IntsAttribute({1, 1, 1, 1})}}};
  conv.outputs = 3;  // dX, dW, dB
  ExpectMatchesCpu(conv, 1e-4, 1e-4);
  conv.attrs["relu_mask"] = IntAttribute(1);
  ExpectMatchesCpu(conv, 1e-4, 1e-4);
  const std::map<std::string, Attribute> window = {{"kernel_shape", IntsAttribute({2, 2})}, {"strides", IntsAttribute({2, 2})}};
  ExpectMatchesCpu({"ai.tandem", "MaxPoolGrad", {{"dy", Random({2, 3, 4, 4}, 80)}, {"x", Random({2, 3, 8, 8}, 81)}}, window});
  ExpectMatchesCpu({"ai.tandem", "AveragePoolGrad", {{"dy", Random({2, 3, 4, 4}, 82)}, {"x", Random({2, 3, 8, 8}, 83)}}, window});
  ExpectMatchesCpu({"ai.tandem", "GlobalAveragePoolGrad", {{"dy", Random({2, 3, 1, 1}, 84)}, {"x", Random({2, 3, 5, 5}, 85)}}});
}

TEST(CudaKernels, ClassificationLossesAndGradients) {
  REQUIRE_GPU();
  for (const char* r : {"mean", "sum", "none"}) {
    std::map<std::string, Attribute> attrs = {{"reduction", StringAttribute(r)}};
    NodeCase sce{"", "SoftmaxCrossEntropyLoss", {{"x", Random({16, 10}, 86, -3.f, 3.f)}, {"t", Labels({16}, 10, 87)}}, attrs};
    sce.outputs = 2;  // the loss and the log-probabilities
    ExpectMatchesCpu(sce, 1e-5, 1e-6);
    attrs["ignore_index"] = IntAttribute(3);  // weights and an ignored class: the weighted mean
    ExpectMatchesCpu({"", "SoftmaxCrossEntropyLoss",
                      {{"x", Random({4, 5, 3}, 88)}, {"t", Labels({4, 3}, 5, 89)}, {"w", Random({5}, 90, 0.5f, 2.f)}}, attrs},
                     1e-5, 1e-6);
    const Tensor dy = std::string(r) == "none" ? Random({16}, 91) : Random({}, 91);
    ExpectMatchesCpu({"ai.tandem", "SoftmaxCrossEntropyLossGrad",
                      {{"dy", dy}, {"x", Random({16, 10}, 92)}, {"t", Labels({16}, 10, 93)}},
                      {{"reduction", StringAttribute(r)}}}, 1e-5, 1e-6);
    ExpectMatchesCpu({"", "NegativeLogLikelihoodLoss", {{"x", Random({16, 10}, 94, -5.f, 0.f)}, {"t", Labels({16}, 10, 95)}},
                      {{"reduction", StringAttribute(r)}}}, 1e-5, 1e-6);
  }
}

TEST(CudaKernels, SoftmaxFamilyAndGradients) {
  REQUIRE_GPU();
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    ExpectMatchesCpu({"", op, {{"x", Random({4, 10}, 96, -4.f, 4.f)}}}, 1e-5, 1e-6);
    ExpectMatchesCpu({"", op, {{"x", Random({2, 3, 4, 5}, 97)}}, {{"axis", IntAttribute(1)}}}, 1e-5, 1e-6);
    NodeCase old_opset{"", op, {{"x", Random({2, 3, 4}, 98)}}, {{"axis", IntAttribute(1)}}};
    old_opset.opset = 11;  // over every dim from the axis on
    ExpectMatchesCpu(old_opset, 1e-5, 1e-6);
  }
  for (const char* op : {"SoftmaxGrad", "LogSoftmaxGrad"})
    for (int coerce : {0, 1})
      ExpectMatchesCpu({"ai.tandem", op, {{"dy", Random({2, 3, 4}, 99)}, {"y", Random({2, 3, 4}, 100, -2.f, 0.f)}},
                        {{"axis", IntAttribute(1)}, {"coerce", IntAttribute(coerce)}}}, 1e-5, 1e-6);
}

TEST(CudaKernels, BatchNormalizationAndGradients) {
  REQUIRE_GPU();
  auto params = [](uint32_t seed) {
    return std::vector<std::pair<std::string, Tensor>>{{"x", Random({4, 3, 5, 5}, seed)},
                                                       {"scale", Random({3}, seed + 1, 0.5f, 2.f)},
                                                       {"b", Random({3}, seed + 2)},
                                                       {"mean", Random({3}, seed + 3)},
                                                       {"var", Random({3}, seed + 4, 0.5f, 2.f)}};
  };
  ExpectMatchesCpu({"", "BatchNormalization", params(101)}, 1e-5, 1e-5);  // inference
  NodeCase train{"", "BatchNormalization", params(106), {{"training_mode", IntAttribute(1)}, {"momentum", FloatAttribute(0.8f)}}};
  train.opset = 15;
  train.outputs = 3;  // Y, running mean, running var
  ExpectMatchesCpu(train, 1e-5, 1e-5);
  NodeCase grad{"ai.tandem", "BatchNormalizationGrad",
                {{"dy", Random({4, 3, 5, 5}, 111)}, {"x", Random({4, 3, 5, 5}, 112)}, {"scale", Random({3}, 113, 0.5f, 2.f)}},
                {{"training_mode", IntAttribute(1)}}};
  grad.outputs = 3;  // dX, dScale, dB
  ExpectMatchesCpu(grad, 1e-4, 1e-5);
  grad.inputs.push_back({"mean", Random({3}, 114)});
  grad.inputs.push_back({"var", Random({3}, 115, 0.5f, 2.f)});
  grad.attrs["training_mode"] = IntAttribute(0);
  ExpectMatchesCpu(grad, 1e-5, 1e-5);
}

TEST(CudaKernels, ConcatAndItsGradient) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "Concat", {{"a", Random({2, 3, 4}, 116)}, {"b", Random({2, 5, 4}, 117)}, {"c", Random({2, 1, 4}, 118)}},
                    {{"axis", IntAttribute(1)}}});
  ExpectMatchesCpu({"", "Concat", {{"a", Random({2, 3}, 119)}, {"b", Random({4, 3}, 120)}}, {{"axis", IntAttribute(0)}}});
  ExpectMatchesCpu({"", "Concat", {{"a", Random({2, 3}, 121)}, {"b", Random({2, 2}, 122)}}, {{"axis", IntAttribute(-1)}}});
  NodeCase grad{"ai.tandem", "ConcatGrad", {{"dy", Random({2, 9, 4}, 123)}, {"s0", Ints({2, 3, 4})}, {"s1", Ints({2, 6, 4})}},
                {{"axis", IntAttribute(1)}}};
  grad.outputs = 2;
  ExpectMatchesCpu(grad);
}

// The same seed and step draw the same mask on both devices (dropout_mask.h).
TEST(CudaKernels, TrainingDropoutDrawsTheCpusMasks) {
  REQUIRE_GPU();
  for (int64_t step : {1, 7}) {
    NodeCase c{"", "Dropout",
               {{"x", Random({64, 33}, 124)}, {"ratio", Tensor::FromVector<float>({0.3f}, {})},
                {"training", Tensor::FromVector<bool>({true}, {})}, {"step", Tensor::FromVector<int64_t>({step}, {})}},
               {{"seed", IntAttribute(42)}}};
    ExpectMatchesCpu(c, 0, 0);  // bit-identical
  }
  Tensor mask = Tensor::Host(DataType::kBool, {64, 33});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data<bool>()[i] = (i * 7) % 3 != 0;
  ExpectMatchesCpu({"ai.tandem", "DropoutGrad",
                    {{"dy", Random({64, 33}, 125)}, {"mask", mask}, {"ratio", Tensor::FromVector<float>({0.3f}, {})},
                     {"training", Tensor::FromVector<bool>({true}, {})}}}, 0, 0);
}

TEST(CudaKernels, GatherLooksUpRowsOnTheDevice) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "Gather", {{"table", Random({50, 8}, 126)}, {"ids", Labels({4, 6}, 50, 127)}}});
  ExpectMatchesCpu({"", "Gather", {{"x", Random({3, 7, 5}, 128)}, {"i", Tensor::FromVector<int64_t>({6, -1, 0}, {3})}},
                    {{"axis", IntAttribute(1)}}});
}

// --precision tf32: products on TF32 tensor cores, within TF32's rounding (10-bit
// mantissa inputs) of the CPU's float32 results.
TEST(CudaKernels, Tf32PrecisionStaysWithinTf32Rounding) {
  REQUIRE_GPU();
  ProviderOptions tf32;
  tf32.precision = Precision::kTf32;
  ExpectMatchesCpu({"", "MatMul", {{"a", Random({64, 256}, 166)}, {"b", Random({256, 48}, 167)}}}, 1e-2, 2e-2, tf32);
  ExpectMatchesCpu({"", "Conv", {{"x", Random({2, 16, 12, 12}, 168)}, {"w", Random({8, 16, 3, 3}, 169)}},
                    {{"pads", IntsAttribute({1, 1, 1, 1})}}}, 1e-2, 2e-2, tf32);
}

// ConvTranspose as cuDNN's backward-data pass: strides, output_padding, groups, 1-D.
TEST(CudaKernels, ConvTransposeMatchesTheCpu) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "ConvTranspose", {{"x", Random({2, 4, 5, 6}, 170)}, {"w", Random({4, 3, 3, 3}, 171)},
                                          {"b", Random({3}, 172)}}}, 1e-5, 1e-5);
  ExpectMatchesCpu({"", "ConvTranspose", {{"x", Random({2, 4, 5, 6}, 173)}, {"w", Random({4, 2, 3, 3}, 174)}},
                    {{"strides", IntsAttribute({2, 2})}, {"pads", IntsAttribute({1, 1, 1, 1})},
                     {"output_padding", IntsAttribute({1, 0})}, {"group", IntAttribute(2)}}}, 1e-5, 1e-5);
  ExpectMatchesCpu({"", "ConvTranspose", {{"x", Random({3, 2, 9}, 175)}, {"w", Random({2, 5, 4}, 176)}},
                    {{"strides", IntsAttribute({3})}, {"dilations", IntsAttribute({2})}}}, 1e-5, 1e-5);
}

TEST(CudaKernels, GatherGradAddsRepeatedIndicesUp) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"ai.tandem", "GatherGrad",
                    {{"dy", Random({4, 6, 8}, 140)}, {"shape", Ints({50, 8})}, {"ids", Labels({4, 6}, 5, 141)}}},
                   1e-5, 1e-5);  // 24 rows onto 5: atomic sums in any order
  ExpectMatchesCpu({"ai.tandem", "GatherGrad",
                    {{"dy", Random({3, 3, 5}, 142)}, {"shape", Ints({3, 7, 5})},
                     {"i", Tensor::FromVector<int64_t>({6, -1, 0}, {3})}},
                    {{"axis", IntAttribute(1)}}});
}

TEST(CudaKernels, HardActivationsAndClip) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "HardSigmoid", {{"x", Random({7, 33}, 143, -5.f, 5.f)}}});
  ExpectMatchesCpu({"", "HardSigmoid", {{"x", Random({7, 33}, 144, -5.f, 5.f)}},
                    {{"alpha", FloatAttribute(0.3f)}, {"beta", FloatAttribute(0.4f)}}});
  ExpectMatchesCpu({"", "HardSwish", {{"x", Random({7, 33}, 145, -5.f, 5.f)}}, {}, 1, 14});
  Tensor odd = Random({2, 3}, 177);
  odd.data<float>()[1] = NAN;
  odd.data<float>()[4] = INFINITY;
  ExpectMatchesCpu({"", "HardSigmoid", {{"x", odd}}}, 0, 0);  // NaN stays NaN, as on the CPU
  ExpectMatchesCpu({"ai.tandem", "ClipGrad", {{"dy", Random({2, 3}, 178)}, {"x", odd}}}, 0, 0);  // no bounds: all pass
  NodeCase old{"", "Clip", {{"x", Random({5, 9}, 146, -3.f, 3.f)}}, {{"min", FloatAttribute(-1.f)}, {"max", FloatAttribute(0.5f)}}};
  old.opset = 6;
  ExpectMatchesCpu(old, 0, 0);
  ExpectMatchesCpu({"", "Clip", {{"x", Random({5, 9}, 147, -9.f, 9.f)}, {"lo", Tensor::FromVector<float>({0.f}, {})},
                                 {"hi", Tensor::FromVector<float>({6.f}, {})}}}, 0, 0);  // ReLU6
  ExpectMatchesCpu({"", "Clip", {{"x", Random({5, 9}, 148, -9.f, 9.f)}, {"lo", Tensor::FromVector<float>({-2.f}, {})}}},
                   0, 0);  // no max
  ExpectMatchesCpu({"ai.tandem", "ClipGrad", {{"dy", Random({5, 9}, 149)}, {"x", Random({5, 9}, 150, -9.f, 9.f)},
                                             {"lo", Tensor::FromVector<float>({0.f}, {})},
                                             {"hi", Tensor::FromVector<float>({6.f}, {})}}}, 0, 0);
}

TEST(CudaKernels, SliceAndItsGradient) {
  REQUIRE_GPU();
  ExpectMatchesCpu({"", "Slice", {{"x", Random({6, 10, 4}, 151)}, {"s", Ints({1, -8})}, {"e", Ints({5, 100})},
                                  {"a", Ints({0, 1})}, {"st", Ints({2, 3})}}}, 0, 0);
  ExpectMatchesCpu({"", "Slice", {{"x", Random({6, 10}, 152)}, {"s", Ints({-1})}, {"e", Ints({-100})},
                                  {"a", Ints({1})}, {"st", Ints({-2})}}}, 0, 0);  // backwards
  ExpectMatchesCpu({"", "Slice", {{"x", Random({6, 10}, 153)}, {"s", Ints({3})}, {"e", Ints({3})}}}, 0, 0);  // empty
  ExpectMatchesCpu({"ai.tandem", "SliceGrad", {{"dy", Random({2, 3, 4}, 154)}, {"shape", Ints({6, 10, 4})},
                                               {"s", Ints({1, -8})}, {"e", Ints({5, 100})}, {"a", Ints({0, 1})},
                                               {"st", Ints({2, 3})}}}, 0, 0);
}

TEST(CudaKernels, PadInEveryMode) {
  REQUIRE_GPU();
  const Tensor x = Random({2, 3, 5, 4}, 155);
  ExpectMatchesCpu({"", "Pad", {{"x", x}, {"p", Ints({0, 0, 1, 2, 0, 0, 3, 1})}}}, 0, 0);  // zeros
  ExpectMatchesCpu({"", "Pad", {{"x", x}, {"p", Ints({0, 0, 1, -1, 0, 0, -2, 1})}, {"v", Tensor::FromVector<float>({2.5f}, {})}}},
                   0, 0);  // crops and a value
  for (const char* mode : {"reflect", "edge"})
    ExpectMatchesCpu({"", "Pad", {{"x", x}, {"p", Ints({0, 0, 3, 2, 0, 0, 1, 3})}}, {{"mode", StringAttribute(mode)}}}, 0, 0);
  NodeCase wrap{"", "Pad", {{"x", x}, {"p", Ints({0, 0, 6, 2, 0, 0, 1, 5})}}, {{"mode", StringAttribute("wrap")}}};
  wrap.opset = 19;
  ExpectMatchesCpu(wrap, 0, 0);
  NodeCase old{"", "Pad", {{"x", x}}, {{"pads", IntsAttribute({0, 1, 0, 0, 0, 1, 2, 0})}, {"value", FloatAttribute(-1.f)}}};
  old.opset = 2;
  ExpectMatchesCpu(old, 0, 0);
}

// Floats with the values Cast treats specially: NaN, beyond int64, fractions, signed zeros.
Tensor CastEdgeValues() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  return Tensor::FromVector<float>({nan, 1e20f, -1e20f, -2.7f, 2.7f, 0.f, -0.f, 255.9f, -129.5f, 3e9f, 1.f, -1.f},
                                   {3, 4});
}

TEST(CudaKernels, CastBetweenEveryTypePair) {
  REQUIRE_GPU();
  const std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kInt8, DataType::kUint8,
                                       DataType::kInt32, DataType::kInt64,  DataType::kBool};
  for (DataType to : types) {
    NodeCase c{"", "Cast", {{"x", CastEdgeValues()}}, {{"to", IntAttribute(static_cast<int64_t>(to))}}};
    c.output_type = to;
    ExpectMatchesCpu(c, 0, 0);
  }
  // From every type: the float edge values cast on the CPU first (a constant input).
  SessionOptions cpu;
  cpu.providers = {"cpu"};
  for (DataType from : types) {
    auto pre = Session::FromGraph(SingleNode([&] {
                                    NodeCase c{"", "Cast", {{"x", CastEdgeValues()}},
                                               {{"to", IntAttribute(static_cast<int64_t>(from))}}};
                                    c.output_type = from;
                                    return c;
                                  }()),
                                  cpu);
    ASSERT_TRUE(pre.ok()) << pre.status();
    auto v = (*pre)->Run({{"x", CastEdgeValues()}});
    ASSERT_TRUE(v.ok()) << v.status();
    for (DataType to : types) {
      NodeCase c{"", "Cast", {{"x", (*v)[0]}}, {{"to", IntAttribute(static_cast<int64_t>(to))}}};
      c.output_type = to;
      ExpectMatchesCpu(c, 0, 0);
    }
  }
}

TEST(CudaKernels, ComparisonsLogicAndWhere) {
  REQUIRE_GPU();
  Tensor a = Random({4, 5, 6}, 156), b = Random({5, 1}, 157);
  a.data<float>()[3] = b.data<float>()[0];  // some equal pairs
  a.data<float>()[7] = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    NodeCase c{"", op, {{"a", a}, {"b", b}}};
    c.output_type = DataType::kBool;
    ExpectMatchesCpu(c, 0, 0);
    NodeCase ints{"", op, {{"a", Ints({3, -1, 7, 7, 0})}, {"b", Ints({3, 2, 7, -9, 0})}}};
    ints.output_type = DataType::kBool;
    ExpectMatchesCpu(ints, 0, 0);
  }
  const Tensor p = Tensor::FromVector<bool>({true, false, true, false, true, true}, {2, 3});
  const Tensor q = Tensor::FromVector<bool>({true, false, false}, {3});
  for (const char* op : {"And", "Or", "Xor"}) {
    NodeCase c{"", op, {{"p", p}, {"q", q}}};
    c.output_type = DataType::kBool;
    ExpectMatchesCpu(c, 0, 0);
  }
  NodeCase n{"", "Not", {{"p", p}}};
  n.output_type = DataType::kBool;
  ExpectMatchesCpu(n, 0, 0);
  const Tensor cond = Tensor::FromVector<bool>({true, false, false, true}, {4, 1, 1});
  ExpectMatchesCpu({"", "Where", {{"c", cond}, {"x", Random({4, 5, 6}, 158)}, {"y", Random({6}, 159)}}}, 0, 0);
  ExpectMatchesCpu({"", "Where", {{"c", Tensor::FromVector<bool>({true, false, true}, {3})}, {"x", Random({3}, 160)},
                                  {"y", Random({3}, 161)}}}, 0, 0);  // same shapes
  NodeCase ints{"", "Where", {{"c", cond}, {"x", Ints({1, 2})}, {"y", Ints({-5})}}};
  ints.output_type = DataType::kInt64;
  ExpectMatchesCpu(ints, 0, 0);
}

TEST(CudaKernels, LayerNormalizationAndItsGradient) {
  REQUIRE_GPU();
  NodeCase ln{"", "LayerNormalization", {{"x", Random({6, 7, 32}, 156, -3.f, 3.f)}, {"s", Random({32}, 157)}, {"b", Random({32}, 158)}}};
  ln.opset = 17;
  ln.outputs = 3;
  ExpectMatchesCpu(ln, 1e-5, 1e-5);
  NodeCase two{"", "LayerNormalization", {{"x", Random({4, 3, 5}, 159)}, {"s", Random({5}, 160)}}, {{"axis", IntAttribute(1)}}};
  two.opset = 17;  // normalized over [3, 5], the scale broadcast along it
  ExpectMatchesCpu(two, 1e-5, 1e-5);
  NodeCase grad{"ai.tandem", "LayerNormalizationGrad",
                {{"dy", Random({6, 7, 32}, 161)}, {"x", Random({6, 7, 32}, 162, -3.f, 3.f)}, {"s", Random({32}, 163)}}};
  grad.outputs = 3;
  ExpectMatchesCpu(grad, 1e-4, 1e-5);
  // Many rows, few columns: dScale and dB summed in 64 parts of the rows, then the parts.
  NodeCase tall{"ai.tandem", "LayerNormalizationGrad",
                {{"dy", Random({4096, 64}, 180)}, {"x", Random({4096, 64}, 181, -3.f, 3.f)}, {"s", Random({64}, 182)}}};
  tall.outputs = 3;
  ExpectMatchesCpu(tall, 1e-4, 1e-4);
}

TEST(CudaKernels, OptimizerUpdatesMatchTheCpuInPlace) {
  REQUIRE_GPU();
  // The update writes its inputs in place; compare the updated param via the output alias.
  for (const char* op : {"AdamUpdate", "AdamWUpdate", "MomentumUpdate", "SGDUpdate"}) {
    const std::string name = op;
    const int ns = name == "SGDUpdate" ? 0 : name == "MomentumUpdate" ? 1 : 2;
    NodeCase c{"ai.tandem", op, {{"p", Random({1000}, 44)}, {"g", Random({1000}, 45)}}};
    for (int s = 0; s < ns; ++s) c.inputs.push_back({"s" + std::to_string(s), Random({1000}, 46 + s, 0.f, 1.f)});
    c.inputs.push_back({"step", Tensor::FromVector<int64_t>({3}, {})});
    c.inputs.push_back({"lr", Tensor::FromVector<float>({0.01f}, {})});
    c.attrs["weight_decay"] = FloatAttribute(0.01f);
    ExpectMatchesCpu(c, 1e-5, 1e-6);
  }
}

void ExpectSameCurve(const std::vector<double>& gpu, const std::vector<double>& cpu, double rtol) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_NEAR(gpu[i], cpu[i], rtol * std::fabs(cpu[i]) + 1e-7) << "step " << i + 1;
}

// The GPU ran the step: every matrix product, convolution and optimizer update of the
// training graph is on cuda (an all-CPU placement would match the CPU curve trivially).
void ExpectStepOnTheGpu(const TrainRun& run) {
  auto heavy = [](const std::string& op) {
    return op.find("MatMul") != std::string::npos || op.find("Gemm") != std::string::npos ||
           op.find("Conv") != std::string::npos || op.find("Update") != std::string::npos;
  };
  int on_gpu = 0;
  for (const std::string& op : run.ops_on.count("cuda") ? run.ops_on.at("cuda") : std::vector<std::string>{})
    on_gpu += heavy(op);
  EXPECT_GT(on_gpu, 0) << "no matrix product, convolution or update ran on cuda";
  std::string on_cpu;
  for (const std::string& op : run.ops_on.count("cpu") ? run.ops_on.at("cpu") : std::vector<std::string>{})
    if (heavy(op)) on_cpu += " " + op;
  EXPECT_TRUE(on_cpu.empty()) << "on the CPU instead of the GPU:" << on_cpu;
}

TEST(CudaTraining, PeaksMlpLossCurveMatchesCpu) {
  REQUIRE_GPU();
  auto run = [](std::vector<std::string> p) {
    return Train("peaks_mlp.onnx", p, {512, 2}, {512, 1}, training::LossKind::kMse, 30);
  };
  auto gpu = run({"cuda", "cpu"});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto cpu = run({"cpu"});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ExpectStepOnTheGpu(*gpu);
  ExpectSameCurve(gpu->losses, cpu->losses, 1e-4);
}

TEST(CudaTraining, FashionCnnLossCurveMatchesCpu) {
  REQUIRE_GPU();
  auto run = [](std::vector<std::string> p) {
    return Train("fashion_cnn.onnx", p, {32, 1, 28, 28}, {32}, training::LossKind::kCrossEntropy, 20);
  };
  auto gpu = run({"cuda", "cpu"});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  auto cpu = run({"cpu"});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ExpectStepOnTheGpu(*gpu);
  ExpectSameCurve(gpu->losses, cpu->losses, 1e-4);
}

// A training step recorded as a CUDA graph and replayed takes the steps the launched
// kernels take: each replay reads that step's batch, step and learning rate.
TEST(CudaTraining, CudaGraphReplaysTakeTheLaunchedSteps) {
  REQUIRE_GPU();
  struct Case {
    const char* model;
    Dims x, y;
    training::LossKind loss;
  };
  for (const Case& c : {Case{"peaks_mlp.onnx", {512, 2}, {512, 1}, training::LossKind::kMse},
                        Case{"fashion_cnn.onnx", {32, 1, 28, 28}, {32}, training::LossKind::kCrossEntropy}}) {
    SCOPED_TRACE(c.model);
    auto launched = Train(c.model, {"cuda", "cpu"}, c.x, c.y, c.loss, 12, false);
    ASSERT_TRUE(launched.ok()) << launched.status();
    auto replayed = Train(c.model, {"cuda", "cpu"}, c.x, c.y, c.loss, 12, true);
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    EXPECT_EQ(replayed->graph_status, "");
    EXPECT_EQ(replayed->replays, 10);  // step 1 launches, step 2 records, 3-12 replay
    ExpectSameCurve(replayed->losses, launched->losses, 1e-6);
  }
}

TEST(CudaRuntime, CudaGraphInferenceMatchesLaunches) {
  REQUIRE_GPU();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  auto launched = Session::Load(ModelPath("fashion_cnn.onnx"), o);
  o.device_graphs = true;
  auto replayed = Session::Load(ModelPath("fashion_cnn.onnx"), o);
  ASSERT_TRUE(launched.ok() && replayed.ok());
  const std::string input = (*launched)->inputs()[0].name;
  for (int run = 0; run < 5; ++run) {
    Tensor x = Random({1, 1, 28, 28}, 300 + run);
    auto a = (*launched)->Run({{input, x}});
    auto b = (*replayed)->Run({{input, x}});
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ((*b)[0].dims(), (*a)[0].dims());
    for (int64_t i = 0; i < (*a)[0].numel(); ++i)  // the same kernels on the same data
      ASSERT_EQ((*b)[0].data<float>()[i], (*a)[0].data<float>()[i]) << "run " << run << " element " << i;
  }
  EXPECT_EQ((*replayed)->device_graph_status(), "");
  EXPECT_EQ((*replayed)->device_graph_replays(), 3);
}

// Sessions of one GPU share its stream, cuDNN/cuBLASLt handles and workspace
// (DeviceContext). Two threads running two sessions at once must get what each gets
// alone: cuDNN's handle is used by one thread at a time, the workspace in stream order.
TEST(CudaRuntime, ConcurrentSessionsOnOneGpuAgreeWithRunsAlone) {
  REQUIRE_GPU();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  // Two sessions of the Fashion CNN at different batch sizes: cuDNN picks algorithms and
  // workspace sizes per shape.
  auto small = Session::Load(ModelPath("fashion_cnn.onnx"), o);
  auto large = Session::Load(ModelPath("fashion_cnn.onnx"), o);
  ASSERT_TRUE(small.ok() && large.ok());
  struct Job {
    Session* session;
    Tensor x;
    Tensor alone;
    std::string failure;
  } jobs[2] = {{small->get(), Random({8, 1, 28, 28}, 310), {}, {}}, {large->get(), Random({64, 1, 28, 28}, 311), {}, {}}};
  // Together first (the sessions' first runs, the workspace growing meanwhile), then each
  // alone for the reference.
  std::vector<std::vector<Tensor>> together(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&jobs, &together, t] {
      Job& j = jobs[t];
      for (int run = 0; run < 20; ++run) {
        auto y = j.session->Run({{j.session->inputs()[0].name, j.x}});
        if (!y.ok()) {
          j.failure = std::string(y.status().message());
          return;
        }
        together[t].push_back((*y)[0]);
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 2; ++t) {
    Job& j = jobs[t];
    ASSERT_EQ(j.failure, "");
    auto y = j.session->Run({{j.session->inputs()[0].name, j.x}});
    ASSERT_TRUE(y.ok()) << y.status();
    j.alone = (*y)[0];
    for (size_t run = 0; run < together[t].size(); ++run)
      for (int64_t i = 0; i < j.alone.numel(); ++i)  // deterministic algorithms: bitwise equal
        ASSERT_EQ(together[t][run].data<float>()[i], j.alone.data<float>()[i])
            << "model " << t << " run " << run << " element " << i << " differs from the run alone";
  }
}

TEST(CudaRuntime, ResidentInputsAreNotCopiedAndOutputsComeBackToTheHost) {
  REQUIRE_GPU();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  auto s = Session::Load(ModelPath("peaks_mlp.onnx"), o);
  ASSERT_TRUE(s.ok()) << s.status();
  Tensor x = Random({40000, 2}, 52);
  auto xd = (*s)->ToDevice(x);
  ASSERT_TRUE(xd.ok()) << xd.status();
  EXPECT_EQ(xd->device().type, DeviceType::kCuda);
  auto a = (*s)->Run({{"x", x}});
  auto b = (*s)->Run({{"x", *xd}});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ((*b)[0].device().type, DeviceType::kCpu);
  for (int64_t i = 0; i < (*a)[0].numel(); ++i) ASSERT_EQ((*a)[0].data<float>()[i], (*b)[0].data<float>()[i]);
}

TEST(CudaRuntime, OutOfMemoryIsAClearErrorNotACrash) {
  REQUIRE_GPU();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  auto s = Session::Load(ModelPath("peaks_mlp.onnx"), o);
  ASSERT_TRUE(s.ok()) << s.status();
  // 2^40 bytes cannot be had on any current GPU.
  Tensor huge(DataType::kFloat, {int64_t{1} << 38}, std::make_shared<Buffer>());
  auto d = (*s)->ToDevice(huge);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string(d.status().message()).find("out of"), std::string::npos) << d.status();
}

}  // namespace
}  // namespace tandem
