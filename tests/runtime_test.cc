// Runtime: buffer reuse by liveness, profiling, constant folding, dead-code elimination.
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>

#include "graph/passes.h"
#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using tandem::testing::Serialize;
using tandem::testing::UnaryChainModel;

absl::StatusOr<Graph> Import(const onnx::ModelProto& m) {
  std::string bytes = Serialize(m);
  return ImportModelBuffer(bytes.data(), bytes.size(), "", "test");
}

TEST(Runtime, ChainReusesBuffersByLiveness) {
  const int64_t n = 1 << 18;  // 1 MiB of floats per value
  std::vector<std::string> ops(12, "Neg");
  auto g = Import(UnaryChainModel(ops, n));
  ASSERT_TRUE(g.ok()) << g.status();
  SessionOptions o;
  o.num_threads = 1;
  auto s = Session::FromGraph(*g, o);
  ASSERT_TRUE(s.ok()) << s.status();
  Tensor x = Tensor::Host(DataType::kFloat, {n});
  for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = static_cast<float>(i % 97);
  auto out = (*s)->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
  // 12 negations: the sign is back where it started.
  for (int64_t i = 0; i < n; i += 1001) ASSERT_EQ((*out)[0].data<float>()[i], x.data<float>()[i]);
  // Without reuse the chain would hold 12 MiB; with it, at most a few values are alive.
  EXPECT_LE((*s)->peak_memory_bytes(), 3u * n * sizeof(float));
}

TEST(Runtime, RunLeavesTheCallersOpenMPTeamSizeAsItWas) {
  // Steps set their own team size (tiny nodes run on one thread); the caller's is restored.
  auto g = Import(UnaryChainModel({"Neg", "Abs"}, 8));
  ASSERT_TRUE(g.ok()) << g.status();
  SessionOptions o;
  o.num_threads = 2;
  auto s = Session::FromGraph(*g, o);
  ASSERT_TRUE(s.ok()) << s.status();
  omp_set_num_threads(3);
  auto out = (*s)->Run({{"x", Tensor::Host(DataType::kFloat, {8})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(omp_get_max_threads(), 3);
}

// The profile counts every call since creation or the last ResetProfile (which `tandem
// run --profile` calls after its warm-up run, so first-call primitive creation is left out).
TEST(Runtime, ProfileCountsCallsSinceTheLastReset) {
  auto g = Import(UnaryChainModel({"Neg", "Abs"}, 8));
  ASSERT_TRUE(g.ok()) << g.status();
  SessionOptions o;
  o.num_threads = 1;
  o.profiling = true;
  auto s = Session::FromGraph(*g, o);
  ASSERT_TRUE(s.ok()) << s.status();
  const std::map<std::string, Tensor> feeds = {{"x", Tensor::Host(DataType::kFloat, {8})}};
  auto calls = [&] {
    std::vector<int64_t> c;
    for (const StepProfile& p : (*s)->profile()) c.push_back(p.calls);
    return c;
  };
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*s)->Run(feeds).ok());
  EXPECT_EQ(calls(), (std::vector<int64_t>{3, 3}));
  (*s)->ResetProfile();
  EXPECT_EQ(calls(), (std::vector<int64_t>{0, 0}));
  for (const StepProfile& p : (*s)->profile()) EXPECT_EQ(p.total_us, 0.0);
  ASSERT_TRUE((*s)->Run(feeds).ok());
  EXPECT_EQ(calls(), (std::vector<int64_t>{1, 1}));
}

TEST(Runtime, FoldsConstantSubgraphsAndRemovesDeadNodes) {
  onnx::ModelProto m = UnaryChainModel({"Relu"}, 3);
  auto* g = m.mutable_graph();
  // c = Exp(k) with k an initializer is constant; y2 = y + c; dead = Neg(x) is unused.
  auto* k = g->add_initializer();
  k->set_name("k");
  k->set_data_type(onnx::TensorProto::FLOAT);
  k->add_dims(3);
  for (float v : {0.f, 1.f, 2.f}) k->add_float_data(v);
  auto* exp = g->add_node();
  exp->set_op_type("Exp");
  exp->add_input("k");
  exp->add_output("c");
  auto* add = g->add_node();
  add->set_op_type("Add");
  add->add_input("y");
  add->add_input("c");
  add->add_output("y2");
  auto* dead = g->add_node();
  dead->set_op_type("Neg");
  dead->add_input("x");
  dead->add_output("unused");
  g->mutable_output(0)->set_name("y2");
  auto graph = Import(m);
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto s = Session::FromGraph(*graph);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->stats().nodes_folded, 1);
  EXPECT_EQ((*s)->stats().nodes_removed, 1);
  EXPECT_EQ((*s)->graph().nodes.size(), 2u);
  auto out = (*s)->Run({{"x", Tensor::FromVector<float>({-1.f, 0.5f, 2.f}, {3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  const float* y = (*out)[0].data<float>();
  EXPECT_NEAR(y[0], 0.0 + std::exp(0.0), 1e-6);
  EXPECT_NEAR(y[1], 0.5 + std::exp(1.0), 1e-5);
  EXPECT_NEAR(y[2], 2.0 + std::exp(2.0), 1e-5);
}

TEST(Graph, TopologicalOrderSortsShuffledNodes) {
  auto g = Import(UnaryChainModel({"Relu", "Neg", "Abs"}, 2));
  ASSERT_TRUE(g.ok()) << g.status();
  std::swap(g->nodes[0], g->nodes[2]);
  ASSERT_TRUE(g->SortTopologically().ok());
  EXPECT_EQ(g->nodes[0].op_type, "Relu");
  EXPECT_EQ(g->nodes[1].op_type, "Neg");
  EXPECT_EQ(g->nodes[2].op_type, "Abs");
}

}  // namespace
}  // namespace tandem
