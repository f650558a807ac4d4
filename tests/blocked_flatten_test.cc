// A dense layer reading a channel-blocked feature map directly (providers/cpu/rewrites/blocked_flatten.h):
// Conv + Relu -> Flatten -> Gemm (B, B^T) / MatMul, in each channel-blocked layout, gives
// the plain graph's outputs (fusion off) with no FromBlocked left and B permuted; B shared
// with another reader is permuted into a copy; a Flatten whose output is also returned
// keeps the plain path.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "onnx_import/import.h"
#include "providers/cpu/channel_block.h"
#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// A float initializer of sin values (no period a permutation could hide behind).
void AddSinInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, float phase) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) t->add_float_data(0.1f * std::sin(0.731f * static_cast<float>(i) + phase));
}

enum class Head { kGemm, kGemmTransB, kMatMul, kSharedWeights, kFlattenReturned };

// x[2,3,6,6] -> Conv 16 3x3 pad 1 + Relu -> Flatten = f [2, 576] -> head = y [2, 10].
onnx::ModelProto Model(Head head) {
  onnx::ModelProto m = EmptyModel(13, "blocked_flatten");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {2, 3, 6, 6});
  AddSinInitializer(g, "wc", {16, 3, 3, 3}, 0.f);
  AddSinInitializer(g, "bc", {16}, 1.f);
  AddIntsAttribute(AddNode(g, "Conv", "conv", {"x", "wc", "bc"}, {"c"}), "pads", {1, 1, 1, 1});
  AddNode(g, "Relu", "relu", {"c"}, {"r"});
  AddNode(g, "Flatten", "flat", {"r"}, {"f"});
  const bool trans_b = head == Head::kGemmTransB || head == Head::kSharedWeights;
  AddSinInitializer(g, "w", trans_b ? std::vector<int64_t>{10, 576} : std::vector<int64_t>{576, 10}, 2.f);
  AddSinInitializer(g, "b", {10}, 3.f);
  if (head == Head::kMatMul) {
    AddNode(g, "MatMul", "dense", {"f", "w"}, {"y"});
  } else {
    AddIntAttribute(AddNode(g, "Gemm", "dense", {"f", "w", "b"}, {"y"}), "transB", trans_b);
  }
  SetFloatType(g->add_output(), "y", {2, 10});
  if (head == Head::kSharedWeights) {  // w read again, by a product of a second input
    SetFloatType(g->add_input(), "x2", {2, 576});
    AddIntAttribute(AddNode(g, "Gemm", "dense2", {"x2", "w"}, {"y2"}), "transB", 1);
    SetFloatType(g->add_output(), "y2", {2, 10});
  }
  if (head == Head::kFlattenReturned) SetFloatType(g->add_output(), "f", {2, 576});
  return m;
}

// Both sessions on x (sin values) and, where the model has it, x2: the same outputs,
// judged against each output's scale.
void ExpectSameOutputs(Session& a, Session& b, bool with_x2) {
  std::map<std::string, Tensor> feeds;
  for (const auto& [name, dims] : std::map<std::string, Dims>{{"x", {2, 3, 6, 6}}, {"x2", {2, 576}}}) {
    if (name == "x2" && !with_x2) continue;
    Tensor t = Tensor::Host(DataType::kFloat, dims);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(0.37f * static_cast<float>(i) + name.size());
    feeds[name] = t;
  }
  auto ya = a.Run(feeds), yb = b.Run(feeds);
  ASSERT_TRUE(ya.ok()) << ya.status();
  ASSERT_TRUE(yb.ok()) << yb.status();
  ASSERT_EQ(ya->size(), yb->size());
  for (size_t k = 0; k < ya->size(); ++k) {
    const Tensor &ta = (*ya)[k], &tb = (*yb)[k];
    ASSERT_EQ(ta.dims(), tb.dims()) << "output " << k;
    float largest = 0;
    for (int64_t i = 0; i < tb.numel(); ++i) largest = std::max(largest, std::abs(tb.data<float>()[i]));
    EXPECT_GT(largest, 1e-2f) << "output " << k << " is all near zero";
    for (int64_t i = 0; i < ta.numel(); ++i)
      ASSERT_NEAR(ta.data<float>()[i], tb.data<float>()[i], 1e-5f * std::max(1.f, largest)) << "output " << k << " at " << i;
  }
}

int Count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op;
  return n;
}

class BlockedFlatten : public ::testing::TestWithParam<const char*> {};

TEST_P(BlockedFlatten, DenseHeadsReadTheBlockedMap) {
  const ScopedEnv layout("TANDEM_CPU_CONV_LAYOUT", GetParam());
  for (Head head : {Head::kGemm, Head::kGemmTransB, Head::kMatMul, Head::kSharedWeights, Head::kFlattenReturned}) {
    SCOPED_TRACE("head " + std::to_string(static_cast<int>(head)));
    auto blocked = LoadTestModel(Model(head), true), plain = LoadTestModel(Model(head), false);
    ASSERT_TRUE(blocked && plain);
    const Graph& g = blocked->graph();
    const bool rewritten = head != Head::kFlattenReturned;
    EXPECT_EQ(Count(g, "FromBlocked"), rewritten ? 0 : 1);
    for (const Node& n : g.nodes) {
      if (n.op_type == "Flatten") {
        EXPECT_EQ(n.inputs[0], rewritten ? "r#blocked" : "r");
      }
    }
    // B permuted in place, or into a copy where another product reads it too.
    EXPECT_EQ(g.initializers.count("w#blocked_order"), head == Head::kSharedWeights ? 1u : 0u);
    ExpectSameOutputs(*blocked, *plain, head == Head::kSharedWeights);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, BlockedFlatten, ::testing::Values("nhwc", "nChw16c", "nChw8c"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace tandem
