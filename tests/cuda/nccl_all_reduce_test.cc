// The GPU's data-parallel all-reduce (providers/cuda/kernels/all_reduce_ops.cc, summed by
// NCCL through providers/cuda/nccl_group.h) on one GPU: a group of one rank (NCCL refuses
// two ranks on one device), whose NCCL id still goes through the communicator and whose
// sums still run on NCCL's stream. Two or more GPUs are checked with mpirun
// (docs/DISTRIBUTED.md). Skips without a GPU, as tests/cuda/cuda_provider_test.cc.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/cuda/cuda_test_util.h"
#include "tests/mirror_communicator.h"
#include "training/trainer.h"

namespace tandem {
namespace {

// AllReduceStart(g1, g2, scale) -> packed; AllReduceWait(packed, g1, g2) -> r1, r2.
Graph Bucket(const Dims& d1, const Dims& d2) {
  Graph g;
  g.name = "bucket";
  g.opsets[""] = 13;
  g.opsets["ai.tandem"] = 1;
  for (const auto& [name, dims] : {std::pair<std::string, Dims>{"g1", d1}, {"g2", d2}, {"scale", {}}})
    g.inputs.push_back(ValueInfo{name, DataType::kFloat, Shape::Of(dims)});
  Node start, wait;
  start.name = "start", start.op_type = "AllReduceStart", start.domain = "ai.tandem";
  start.inputs = {"g1", "g2", "scale"}, start.outputs = {"packed"};
  wait.name = "wait", wait.op_type = "AllReduceWait", wait.domain = "ai.tandem";
  wait.inputs = {"packed", "g1", "g2"}, wait.outputs = {"r1", "r2"};
  g.nodes = {start, wait};
  g.outputs = {ValueInfo{"r1", DataType::kFloat, Shape::Of(d1)}, ValueInfo{"r2", DataType::kFloat, Shape::Of(d2)}};
  return g;
}

// One rank's sum is its own bucket: r_i = scale * g_i, rounded once (as float32 does).
TEST(CudaDataParallel, OneRankBucketSumIsTheScaledGradients) {
  REQUIRE_GPU();
  MirrorCommunicator one(1);
  ScopedCommunicator scoped(&one);
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  auto s = Session::FromGraph(Bucket({3, 70}, {1000}), o);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const Node& n : (*s)->graph().nodes)
    if (n.op_type.rfind("AllReduce", 0) == 0) EXPECT_EQ(n.provider, "cuda") << n.op_type;
  for (float scale : {1.f, 0.375f}) {  // twice: the second run reuses the NCCL group
    const Tensor g1 = Random({3, 70}, 1), g2 = Random({1000}, 2);
    auto out = (*s)->Run({{"g1", g1}, {"g2", g2}, {"scale", Tensor::FromVector<float>({scale}, {})}});
    ASSERT_TRUE(out.ok()) << out.status();
    for (int k = 0; k < 2; ++k) {
      const Tensor& g = k == 0 ? g1 : g2;
      const Tensor& r = (*out)[k];
      ASSERT_EQ(r.dims(), g.dims());
      for (int64_t i = 0; i < g.numel(); ++i)
        ASSERT_EQ(r.data<float>()[i], static_cast<float>(static_cast<double>(scale) * g.data<float>()[i]))
            << "output " << k << " element " << i << " scale " << scale;
    }
  }
  EXPECT_EQ(one.broadcasts, 1) << "NCCL's id went through the communicator once";
}

// The Fashion CNN, momentum, 8 steps of one batch, in a group of one rank with the
// gradients' all-reduce in the graph (or, with comm null, a plain run).
absl::StatusOr<TrainRun> TrainFashion(Communicator* comm, const std::vector<std::string>& providers,
                                      bool device_graphs) {
  return Train("fashion_cnn.onnx", providers, {32, 1, 28, 28}, {32}, training::LossKind::kCrossEntropy, 8,
               device_graphs, [comm](training::TrainerOptions& o) {
                 o.spec.optimizer.kind = training::OptimizerKind::kMomentum;  // Adam would hide a wrong scale
                 o.spec.optimizer.lr = 0.01f;
                 o.spec.all_reduce = comm != nullptr;
                 o.spec.bucket_bytes = 64 << 10;  // several buckets
                 o.communicator = comm;
               });
}

// The data-parallel step on the GPU sums through NCCL and takes the steps of a plain GPU
// run and of the CPU's all-reduce; recording CUDA graphs, the plan launches instead (a sum
// across processes is not recorded) and still takes them.
TEST(CudaDataParallel, OneRankNcclTrainingTakesThePlainSteps) {
  REQUIRE_GPU();
  MirrorCommunicator one(1);
  ScopedCommunicator scoped(&one);
  auto plain = TrainFashion(nullptr, {"cuda", "cpu"}, false);
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto nccl = TrainFashion(&one, {"cuda", "cpu"}, false);
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  auto cpu = TrainFashion(&one, {"cpu"}, false);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  auto recorded = TrainFashion(&one, {"cuda", "cpu"}, true);
  ASSERT_TRUE(recorded.ok()) << recorded.status();
  EXPECT_EQ(plain->CountOn("cuda", "AllReduce") + plain->CountOn("cpu", "AllReduce"), 0);
  EXPECT_GE(nccl->CountOn("cuda", "AllReduce"), 4) << "several buckets, summed on the GPU";
  EXPECT_EQ(nccl->CountOn("cpu", "AllReduce"), 0);
  EXPECT_GE(cpu->CountOn("cpu", "AllReduce"), 4);
  EXPECT_NE(recorded->graph_status, "") << "a plan with NCCL sums was recorded";
  ASSERT_EQ(nccl->losses.size(), plain->losses.size());
  for (size_t i = 0; i < plain->losses.size(); ++i) {
    const double scale = std::fabs(plain->losses[i]);
    EXPECT_NEAR(nccl->losses[i], plain->losses[i], 1e-6 * scale) << "step " << i + 1;
    EXPECT_NEAR(recorded->losses[i], nccl->losses[i], 1e-6 * scale) << "step " << i + 1;
    EXPECT_NEAR(nccl->losses[i], cpu->losses[i], 1e-4 * scale) << "step " << i + 1;
  }
  EXPECT_LT(nccl->losses.back(), nccl->losses.front()) << "it trains";
}

}  // namespace
}  // namespace tandem
