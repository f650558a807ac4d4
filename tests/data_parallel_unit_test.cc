// The parts of data-parallel training that need no MPI (docs/DISTRIBUTED.md; the mpirun
// runs are tests/data_parallel_test.sh): how a batch is shared, where the gradients'
// AllReduceStart / AllReduceWait nodes go, and the trainer's wiring — with a "mirror" communicator that stands
// for K ranks holding the same values (a sum over them is K times this rank's).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "framework/communicator.h"
#include "onnx_import/import.h"
#include "tests/mirror_communicator.h"
#include "training/data_parallel.h"
#include "training/trainer.h"
#include "training/training_graph.h"

namespace tandem {
namespace {

TEST(DataParallel, SharesCoverTheBatchContiguouslyAndEvenly) {
  for (int64_t rows : {0, 1, 2, 5, 64, 40000}) {
    for (int size : {1, 2, 3, 7}) {
      int64_t next = 0, smallest = rows, largest = 0;
      for (int r = 0; r < size; ++r) {
        const training::RowShare s = training::ShareOf(rows, r, size);
        EXPECT_EQ(s.begin, next) << rows << " rows, rank " << r << " of " << size;
        next = s.end;
        smallest = std::min(smallest, s.size());
        largest = std::max(largest, s.size());
        // The first rows % size ranks take the extra row.
        EXPECT_EQ(s.size(), rows / size + (r < rows % size ? 1 : 0));
      }
      EXPECT_EQ(next, rows);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

Graph PeaksMlp() {
  auto g = ImportModelFile(std::string(TANDEM_SOURCE_DIR) + "/models/peaks_mlp.onnx");
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : Graph();
}

// Buckets of at most one parameter (a bucket size of 1 byte) or all in one: each bucket's
// AllReduceStart right after the node computing its last gradient, its AllReduceWait after
// every Start and reading its packed bucket; the clipping and the updates read only
// reduced gradients; the scale is Start's last input.
TEST(DataParallel, AllReduceNodesSitBetweenGradientsAndUpdates) {
  for (int64_t bucket : {int64_t{1}, int64_t{25} << 20}) {
    training::TrainingSpec spec;
    spec.all_reduce = true;
    spec.bucket_bytes = bucket;
    spec.optimizer.clip_norm = 1.f;  // clipping comes after the reduction
    auto tg = training::BuildTrainingGraph(PeaksMlp(), spec);
    ASSERT_TRUE(tg.ok()) << tg.status();
    const Graph& g = tg->graph;
    EXPECT_EQ(tg->grad_scale, "train/grad_scale");
    std::map<std::string, size_t> made_at;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (const std::string& out : g.nodes[i].outputs) made_at[out] = i;
    std::set<std::string> reduced;
    int starts = 0, waits = 0;
    size_t last_start = 0, first_wait = g.nodes.size();
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op_type == "AllReduceStart") {
        ++starts;
        last_start = i;
        EXPECT_EQ(n.inputs.back(), tg->grad_scale);
        size_t latest = 0;
        for (size_t k = 0; k + 1 < n.inputs.size(); ++k) {
          ASSERT_TRUE(made_at.count(n.inputs[k])) << n.inputs[k];
          EXPECT_LT(made_at[n.inputs[k]], i) << n.inputs[k] << " is reduced before it is computed";
          latest = std::max(latest, made_at[n.inputs[k]]);
        }
        EXPECT_EQ(latest + 1, i) << n.name << " does not follow its last gradient";
      } else if (n.op_type == "AllReduceWait") {
        ++waits;
        first_wait = std::min(first_wait, i);
        ASSERT_EQ(n.inputs.size(), n.outputs.size() + 1);
        ASSERT_TRUE(made_at.count(n.inputs[0]));
        EXPECT_EQ(g.nodes[made_at[n.inputs[0]]].op_type, "AllReduceStart");
        reduced.insert(n.outputs.begin(), n.outputs.end());
      }
    }
    EXPECT_EQ(starts, bucket == 1 ? static_cast<int>(tg->params.size()) : 1);
    EXPECT_EQ(waits, starts);
    EXPECT_LT(last_start, first_wait) << "a Wait comes before every bucket has started";
    EXPECT_EQ(reduced.size(), tg->params.size());
    for (const Node& n : g.nodes) {
      if (n.op_type == "GlobalNormClip") {
        for (const std::string& in : n.inputs) EXPECT_TRUE(reduced.count(in)) << "clipped before the reduction: " << in;
      }
    }
  }
}

// Two mirrored ranks, each with share 1/2 of the same batch: the sum is the whole batch's
// gradient, so the trainer takes the steps a plain one takes; losses come back reduced.
TEST(DataParallel, TrainerWithMirroredRanksStepsLikeOneProcess) {
  Tensor x = Tensor::Host(DataType::kFloat, {256, 2}), y = Tensor::Host(DataType::kFloat, {256, 1});
  for (int64_t i = 0; i < 256; ++i) {
    x.data<float>()[2 * i] = static_cast<float>(std::sin(0.1 * i));
    x.data<float>()[2 * i + 1] = static_cast<float>(std::cos(0.3 * i));
    y.data<float>()[i] = x.data<float>()[2 * i] * x.data<float>()[2 * i + 1];
  }
  auto losses = [&](Communicator* comm, double share) {
    training::TrainerOptions o;
    o.num_threads = 1;
    o.spec.optimizer.kind = training::OptimizerKind::kMomentum;  // Adam would hide a wrong gradient scale
    o.spec.optimizer.lr = 0.01f;
    o.communicator = comm;
    auto t = training::Trainer::Create(PeaksMlp(), o);
    EXPECT_TRUE(t.ok()) << t.status();
    std::vector<double> out;
    if (!t.ok()) return out;
    (*t)->set_batch_share(share);
    for (int s = 0; s < 5; ++s) {
      auto l = (*t)->Step({{"x", x}}, y);
      EXPECT_TRUE(l.ok()) << l.status();
      if (l.ok()) out.push_back(*l);
    }
    return out;
  };
  const std::vector<double> plain = losses(nullptr, 1.0);
  MirrorCommunicator mirror(2);
  ScopedCommunicator scoped(&mirror);
  const std::vector<double> mirrored = losses(&mirror, 0.5);
  ASSERT_EQ(plain.size(), 5u);
  ASSERT_EQ(mirrored.size(), 5u);
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_NEAR(mirrored[i], plain[i], 1e-6 * plain[0]) << "step " << i + 1;
  EXPECT_LT(plain.back(), plain.front());
  EXPECT_GT(mirror.broadcasts, 0) << "the parameters did not come from rank 0";
  EXPECT_GE(mirror.reductions, 10) << "gradients and losses were not reduced";
}

TEST(DataParallel, AllReduceWithoutAProcessGroupSaysHowToLaunch) {
  training::TrainingSpec spec;
  spec.all_reduce = true;
  auto tg = training::BuildTrainingGraph(PeaksMlp(), spec);
  ASSERT_TRUE(tg.ok()) << tg.status();
  SessionOptions so;
  so.num_threads = 1;
  auto s = Session::FromGraph(tg->graph, so);
  ASSERT_TRUE(s.ok()) << s.status();
  std::map<std::string, Tensor> feeds;
  for (const ValueInfo& in : (*s)->inputs()) {
    Dims d;
    for (const Dim& dim : in.shape.dims) d.push_back(dim.known() ? dim.value : 4);
    feeds[in.name] = in.dtype == DataType::kInt64 ? Tensor::Scalar<int64_t>(1) : Tensor::Host(DataType::kFloat, d);
  }
  auto out = (*s)->Run(feeds);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("mpirun"), std::string::npos) << out.status();
}

}  // namespace
}  // namespace tandem
