// The ai.tandem declarations (ops/tandem_ops.h) against what the engine really registers
// and writes: every ai.tandem kernel of the CPU provider and of the CUDA plugin's kernel
// table is declared, every declared op but the device-side Copy has a CPU kernel, and the
// graphs the fusions, the CPU's rewrites, the gradient rules and the optimizers produce for
// the committed models hold only declared ops.
#include <cstdio>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "framework/execution_provider.h"
#include "framework/plugin/provider_plugin.h"
#include "graph/node.h"
#include "onnx_import/import.h"
#include "ops/tandem_ops.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "tests/test_models.h"
#include "training/training_graph.h"

namespace tandem {
namespace {

constexpr char kPrefix[] = "ai.tandem.";

// The ai.tandem ops that `registry` has a kernel for (KernelRegistry::Ops names them
// "domain.op").
std::set<std::string> TandemKernels(const KernelRegistry& registry) {
  std::set<std::string> ops;
  for (const std::string& key : registry.Ops())
    if (key.rfind(kPrefix, 0) == 0) ops.insert(key.substr(sizeof(kPrefix) - 1));
  return ops;
}

TEST(TandemOps, DeclarationsAreSortedUniqueAndComplete) {
  const auto& ops = TandemOps();
  ASSERT_GT(ops.size(), 40u);
  for (size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE(ops[i].name);
    if (i > 0) EXPECT_LT(std::string(ops[i - 1].name), std::string(ops[i].name));
    EXPECT_NE(std::string(ops[i].meaning), "");
    EXPECT_NE(std::string(ops[i].outputs), "");
    EXPECT_EQ(FindTandemOp(ops[i].name), &ops[i]);
  }
  EXPECT_EQ(FindTandemOp("NoSuchOp"), nullptr);
  EXPECT_EQ(FindTandemOp("fusedconv"), nullptr);  // names are case-sensitive, as in ONNX
}

TEST(TandemOps, EveryCpuKernelIsDeclaredAndEveryDeclaredOpHasOne) {
  std::unique_ptr<ExecutionProvider> cpu = CreateCpuProvider();
  const std::set<std::string> kernels = TandemKernels(cpu->registry());
  ASSERT_FALSE(kernels.empty());
  for (const std::string& op : kernels)
    EXPECT_NE(FindTandemOp(op), nullptr) << "ai.tandem " << op << " has a CPU kernel but no declaration";
  // Copy alone runs on the device side of an edge (framework/copy_kernel.h), never on the CPU.
  for (const TandemOpDecl& op : TandemOps())
    if (std::string(op.name) != "Copy")
      EXPECT_TRUE(kernels.count(op.name)) << "ai.tandem " << op.name << " is declared but has no CPU kernel";
  EXPECT_FALSE(kernels.count("Copy"));
}

TEST(TandemOps, EveryCudaKernelIsDeclared) {
  auto preview = CreatePluginPreview("cuda");  // the plugin's kernel table; no GPU needed
  if (!preview.ok()) GTEST_SKIP() << "the CUDA plugin is not built or loadable: " << preview.status().message();
  const std::set<std::string> kernels = TandemKernels((*preview)->registry());
  EXPECT_TRUE(kernels.count("FusedConv"));
  EXPECT_TRUE(kernels.count("Copy"));
  for (const std::string& op : kernels)
    EXPECT_NE(FindTandemOp(op), nullptr) << "ai.tandem " << op << " has a CUDA kernel but no declaration";
}

TEST(TandemOps, APlanRefusesAnUndeclaredOpNamingIt) {
  // Placed by hand: the partitioner would already refuse an op without a kernel, the Plan
  // also refuses one that a provider's rewrite wrote after placement.
  const ValueInfo x{"x", DataType::kFloat, Shape::Of({2, 3})};
  Graph g = testing::TandemOpGraph("NoSuchOp", {x}, {"y"});
  for (Node& n : g.nodes) n.provider = "cpu";
  std::unique_ptr<ExecutionProvider> cpu = CreateCpuProvider();
  auto plan = Plan::Build(g, {{"cpu", cpu.get()}}, 1);
  ASSERT_FALSE(plan.ok());
  const std::string message(plan.status().message());
  EXPECT_NE(message.find("ai.tandem has no op 'NoSuchOp'"), std::string::npos) << message;
}

// Every ai.tandem node of a session's graph (after fusion, the provider's rewrites and
// placement) is declared; building the session also ran the Plan, which refuses undeclared ones.
// Adds the ai.tandem ops seen to `seen`.
void ExpectDeclared(const Graph& graph, const std::string& what, std::set<std::string>& seen) {
  SCOPED_TRACE(what);
  SessionOptions so;
  so.num_threads = 1;
  auto session = Session::FromGraph(graph, so);
  ASSERT_TRUE(session.ok()) << session.status().message();
  for (const Node& n : (*session)->graph().nodes)
    if (n.domain == kTandemDomain) {
      EXPECT_NE(FindTandemOp(n.op_type), nullptr) << n.Describe();
      seen.insert(n.op_type);
    }
}

Graph LoadModel(const std::string& name) {
  auto g = ImportModelFile(std::string(TANDEM_SOURCE_DIR) + "/models/" + name);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? *std::move(g) : Graph();
}

TEST(TandemOps, TheGraphsRewritesAndTrainingWriteHoldOnlyDeclaredOps) {
  using training::LossKind;
  using training::OptimizerKind;
  struct Case {
    const char* model;
    LossKind loss;
  };
  std::set<std::string> seen;
  for (const Case& c : {Case{"fashion_cnn.onnx", LossKind::kCrossEntropy}, Case{"fashion_cnn.onnx", LossKind::kNll},
                        Case{"peaks_mlp.onnx", LossKind::kMse}, Case{"peaks_mlp.onnx", LossKind::kL1},
                        Case{"peaks_mlp.onnx", LossKind::kBceWithLogits}, Case{"ode_mlp.onnx", LossKind::kMse}}) {
    const Graph inference = LoadModel(c.model);
    ExpectDeclared(inference, std::string(c.model) + " inference", seen);
    for (OptimizerKind opt : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam, OptimizerKind::kAdamW})
      for (bool fused : {false, true}) {
        training::TrainingSpec spec;
        spec.loss = c.loss;
        spec.optimizer.kind = opt;
        spec.optimizer.clip_norm = fused ? 1.f : 0.f;  // GlobalNormClip
        spec.cpu_fusions = fused;                // DenseChain*, DenseChainMseGrad
        spec.one_update_node = fused;
        spec.all_reduce = fused;                       // AllReduceStart / AllReduceWait
        auto tg = training::BuildTrainingGraph(inference, spec);
        ASSERT_TRUE(tg.ok()) << c.model << ": " << tg.status().message();
        ExpectDeclared(tg->graph, std::string(c.model) + " training, optimizer " +
                                      std::to_string(static_cast<int>(opt)) + (fused ? ", fused" : ""),
                       seen);
      }
  }
  std::string all;
  for (const std::string& op : seen) all += op + " ";
  std::printf("ai.tandem ops written: %s\n", all.c_str());
  // The cases reach the fusions, the CPU's rewrites, the gradients, the losses and every optimizer.
  for (const char* op : {"FusedConv", "DenseChain", "ConvGrad", "MaxPoolGrad", "SoftmaxCrossEntropyLossGrad",
                         "MSELoss", "SGDUpdate", "MomentumUpdate", "AdamUpdate", "AdamWUpdate", "GlobalNormClip",
                         "AllReduceStart", "AllReduceWait"})
    EXPECT_TRUE(seen.count(op)) << op << " was not written by any case";
}

}  // namespace
}  // namespace tandem
