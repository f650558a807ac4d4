// Fusion pass (optimizer/activation_fusion.h): Conv/Gemm/MatMul + activation become one ai.tandem node
// whose result equals the unfused graph's; values with other readers are left alone.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using tandem::testing::AddFloatInitializer;
using tandem::testing::AddIntsAttribute;
using tandem::testing::AddNode;
using tandem::testing::Serialize;
using tandem::testing::SetFloatType;

// x[2,3,7,7] -> Conv -> Relu -> MaxPool 2x2 (odd size: last row/column dropped) -> Flatten
// -> Gemm -> Clip(-0.5, 0.5) -> MatMul -> Sigmoid -> y, plus a second Conv whose output is
// both a graph output and read by Tanh (not fused).
onnx::ModelProto FusableModel() {
  onnx::ModelProto m = tandem::testing::EmptyModel(13, "fusable");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 7, 7});
  AddFloatInitializer(g, "w", {4, 3, 3, 3}, 0.05f);
  AddFloatInitializer(g, "b", {4}, 0.1f);
  AddFloatInitializer(g, "gw", {36, 5}, 0.02f);
  AddFloatInitializer(g, "gb", {5}, 0.1f);
  AddFloatInitializer(g, "mw", {5, 3}, 0.3f);
  AddFloatInitializer(g, "lo", {}, 0.f);
  AddFloatInitializer(g, "hi", {}, 0.f);
  g->mutable_initializer(5)->set_float_data(0, -0.5f);
  g->mutable_initializer(6)->set_float_data(0, 0.5f);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "w", "b"}, {"c"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", "relu", {"c"}, {"r"});
  auto* pool = AddNode(g, "MaxPool", "pool", {"r"}, {"p"});
  AddIntsAttribute(pool, "kernel_shape", {2, 2});
  AddIntsAttribute(pool, "strides", {2, 2});
  AddNode(g, "Flatten", "flat", {"p"}, {"f"});
  AddNode(g, "Gemm", "gemm", {"f", "gw", "gb"}, {"gy"});
  AddNode(g, "Clip", "clip", {"gy", "lo", "hi"}, {"cl"});
  AddNode(g, "MatMul", "mm", {"cl", "mw"}, {"my"});
  AddNode(g, "Sigmoid", "sig", {"my"}, {"y"});
  AddNode(g, "Conv", "conv2", {"x", "w"}, {"c2"});
  AddNode(g, "Tanh", "tanh", {"c2"}, {"t2"});
  SetFloatType(g->add_output(), "y", {2, 3});
  SetFloatType(g->add_output(), "c2", {2, 4, 5, 5});
  SetFloatType(g->add_output(), "t2", {2, 4, 5, 5});
  return m;
}

std::unique_ptr<Session> Load(bool fusion) {
  std::string bytes = Serialize(FusableModel());
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "fusable");
  EXPECT_TRUE(g.ok()) << g.status();
  SessionOptions o;
  o.num_threads = 1;
  o.fusion = fusion;
  auto s = Session::FromGraph(*g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(Fusion, FusedGraphMatchesUnfused) {
  auto fused = Load(true), plain = Load(false);
  ASSERT_TRUE(fused && plain);
  EXPECT_EQ(fused->stats().nodes_fused, 3);
  EXPECT_EQ(plain->stats().nodes_fused, 0);
  std::map<std::string, std::string> ops;  // name -> domain/op
  for (const Node& n : fused->graph().nodes) ops[n.name] = n.domain + "/" + n.op_type;
  EXPECT_EQ(ops["conv+relu+pool"], std::string(kTandemDomain) + "/FusedConv");
  EXPECT_EQ(ops["gemm+clip"], std::string(kTandemDomain) + "/FusedGemm");
  EXPECT_EQ(ops["mm+sig"], std::string(kTandemDomain) + "/FusedMatMul");
  // c2 is a graph output: Tanh stays separate (conv2 may still become the CPU's
  // channel-blocked FusedConv, without an activation).
  EXPECT_EQ(ops["tanh"], "/Tanh");
  for (const Node& n : fused->graph().nodes)
    if (n.name == "conv2") EXPECT_FALSE(n.has_attr("activation")) << ops["conv2"];

  Tensor x = Tensor::Host(DataType::kFloat, {2, 3, 7, 7});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * i);
  auto a = fused->Run({{"x", x}});
  auto b = plain->Run({{"x", x}});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->size(), 3u);
  for (size_t k = 0; k < a->size(); ++k) {
    const Tensor& ta = (*a)[k];
    const Tensor& tb = (*b)[k];
    ASSERT_EQ(ta.dims(), tb.dims());
    for (int64_t i = 0; i < ta.numel(); ++i)
      EXPECT_NEAR(ta.data<float>()[i], tb.data<float>()[i], 1e-6f) << "output " << k << " at " << i;
  }
  // The Clip really clipped something, so the test exercises the bounds.
  bool varied = false;
  for (int64_t i = 1; i < (*a)[0].numel(); ++i)
    varied |= (*a)[0].data<float>()[i] != (*a)[0].data<float>()[0];
  EXPECT_TRUE(varied);
}

}  // namespace
}  // namespace tandem
