// Training state that a checkpoint must carry: counter-based Dropout masks
// (ops/dropout_mask.h), how the training graph feeds them
// (training/training_graph.h), resuming a Trainer with Dropout bit-identically, and the
// finiteness check that keeps a diverged run out of a checkpoint (training/checkpoint.h).
// tests/train_resume_test.sh and tests/train_faults_test.sh cover the same through the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/dropout_mask.h"
#include "runtime/session.h"
#include "training/checkpoint.h"
#include "training/trainer.h"

namespace tandem::training {
namespace {

Tensor Ramp(Dims dims, float scale) {
  Tensor t = Tensor::Host(DataType::kFloat, dims);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * static_cast<float>(i % 17 - 8) + 0.1f;
  return t;
}

Node MakeNode(const std::string& name, const std::string& op, std::vector<std::string> in,
              std::vector<std::string> out) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// x[64, 64] -> Dropout(ratio 0.3, training, counter) -> y, mask.
std::unique_ptr<Session> DropoutSession() {
  Graph g;
  g.opsets[""] = 13;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({64, 64})},
              ValueInfo{"counter", DataType::kInt64, Shape::Of({})}};
  g.initializers["ratio"] = Tensor::Scalar<float>(0.3f);
  g.initializers["training"] = Tensor::Scalar<bool>(true);
  Node d = MakeNode("drop", "Dropout", {"x", "ratio", "training", "counter"}, {"y", "mask"});
  d.attributes["seed"] = IntAttribute(11);
  g.nodes.push_back(d);
  g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Unknown()},
               ValueInfo{"mask", DataType::kBool, Shape::Unknown()}};
  SessionOptions o;
  o.num_threads = 1;
  auto s = Session::FromGraph(g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::vector<bool> Mask(const Tensor& m) {
  return std::vector<bool>(m.data<bool>(), m.data<bool>() + m.numel());
}

TEST(DropoutMask, IsAFunctionOfSeedCounterAndIndex) {
  const Tensor x = Ramp({64, 64}, 0.25f);
  auto a = DropoutSession(), b = DropoutSession();
  ASSERT_TRUE(a && b);
  auto a1 = a->Run({{"x", x}, {"counter", Tensor::Scalar<int64_t>(1)}});
  auto a2 = a->Run({{"x", x}, {"counter", Tensor::Scalar<int64_t>(2)}});
  auto b1 = b->Run({{"x", x}, {"counter", Tensor::Scalar<int64_t>(1)}});  // another kernel instance
  ASSERT_TRUE(a1.ok() && a2.ok() && b1.ok()) << a1.status() << a2.status() << b1.status();
  EXPECT_EQ(Mask((*a1)[1]), Mask((*b1)[1]));
  EXPECT_NE(Mask((*a1)[1]), Mask((*a2)[1]));

  const uint64_t key = dropout::StreamKey(11, 1);
  const float* in = x.data<float>();
  const float* y = (*a1)[0].data<float>();
  int64_t kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool keep = (*a1)[1].data<bool>()[i];
    ASSERT_EQ(keep, dropout::Keep(key, static_cast<uint64_t>(i), 0.3f)) << i;
    EXPECT_FLOAT_EQ(y[i], keep ? static_cast<float>(in[i] / (1.0 - 0.3f)) : 0.f) << i;
    kept += keep;
  }
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(x.numel()), 0.7, 0.03);
}

// x[8, 4] -> Dropout(ratio) [-> Dropout(ratio), seed 5] -> MatMul(w) -> y.
Graph DropoutModel(bool second_with_seed) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs = {ValueInfo{"x", DataType::kFloat, Shape::Of({8, 4})}};
  g.initializers["ratio"] = Tensor::Scalar<float>(0.25f);
  g.initializers["w"] = Ramp({4, 3}, 0.1f);
  for (const char* v : {"d1", "d2"}) g.value_info[v] = ValueInfo{v, DataType::kFloat, Shape::Of({8, 4})};
  g.nodes.push_back(MakeNode("drop1", "Dropout", {"x", "ratio"}, {"d1"}));
  std::string last = "d1";
  if (second_with_seed) {
    Node d = MakeNode("drop2", "Dropout", {"d1", "ratio"}, {"d2"});
    d.attributes["seed"] = IntAttribute(5);
    g.nodes.push_back(d);
    last = "d2";
  }
  g.nodes.push_back(MakeNode("mm", "MatMul", {last, "w"}, {"y"}));
  g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Of({8, 3})}};
  return g;
}

TEST(TrainingGraph, DropoutReadsTheStepAndGetsASeed) {
  TrainingSpec spec;
  spec.seed = 3;
  auto tg = BuildTrainingGraph(DropoutModel(true), spec);
  ASSERT_TRUE(tg.ok()) << tg.status();
  EXPECT_EQ(tg->params, std::vector<std::string>{"w"});  // the ratio is not trained
  const Node* d1 = nullptr;
  const Node* d2 = nullptr;
  for (const Node& n : tg->graph.nodes) {
    if (n.name == "drop1") d1 = &n;
    if (n.name == "drop2") d2 = &n;
  }
  ASSERT_TRUE(d1 && d2);
  for (const Node* d : {d1, d2}) {
    ASSERT_EQ(d->inputs.size(), 4u);
    EXPECT_EQ(d->inputs[3], tg->step);
    ASSERT_EQ(d->outputs.size(), 2u);  // the mask, for the gradient
    EXPECT_FALSE(d->outputs[1].empty());
  }
  EXPECT_EQ(d2->attr_int("seed", -1), 5);  // the model's own seed wins
  ASSERT_TRUE(d1->has_attr("seed"));
  spec.seed = 4;
  auto other = BuildTrainingGraph(DropoutModel(true), spec);
  ASSERT_TRUE(other.ok()) << other.status();
  for (const Node& n : other->graph.nodes) {
    if (n.name == "drop1") {
      EXPECT_NE(n.attr_int("seed", 0), d1->attr_int("seed", 0));
    }
  }
}

// Steps 1-3, a checkpoint, steps 4-6; a second trainer restored from the checkpoint must
// draw the same masks and so produce the same losses and weights, bit for bit.
TEST(Trainer, ResumesDropoutBitIdentically) {
  TrainerOptions o;
  o.num_threads = 1;
  o.spec.seed = 9;
  const Graph model = DropoutModel(true);
  auto run = Trainer::Create(model, o);
  ASSERT_TRUE(run.ok()) << run.status();
  Trainer& a = **run;
  const Tensor target = Ramp({8, 3}, 0.05f);
  auto batch = [](int step) {
    return std::map<std::string, Tensor>{{"x", Ramp({8, 4}, 0.1f * static_cast<float>(step))}};
  };
  for (int s = 1; s <= 3; ++s) ASSERT_TRUE(a.Step(batch(s), target).ok());
  auto c = a.MakeCheckpoint(1, "");
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<double> losses;
  for (int s = 4; s <= 6; ++s) {
    auto l = a.Step(batch(s), target);
    ASSERT_TRUE(l.ok()) << l.status();
    losses.push_back(*l);
  }

  auto resumed = Trainer::Create(model, o);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  Trainer& b = **resumed;
  ASSERT_TRUE(b.RestoreCheckpoint(*c).ok());
  for (int s = 4; s <= 6; ++s) {
    auto l = b.Step(batch(s), target);
    ASSERT_TRUE(l.ok()) << l.status();
    EXPECT_EQ(*l, losses[static_cast<size_t>(s - 4)]) << "step " << s;
  }
  auto wa = a.ToHostCopies(a.parameters()), wb = b.ToHostCopies(b.parameters());
  ASSERT_TRUE(wa.ok() && wb.ok());
  const Tensor &x = wa->at("w"), &y = wb->at("w");
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(x.data<float>()[i], y.data<float>()[i]) << i;
}

// StepAsync leaves each loss where it was computed; TakeLosses returns them in order,
// equal to what Step returns for the same steps, and then none until the next steps.
TEST(Trainer, AsyncStepsReturnTheSameLossesInOrder) {
  TrainerOptions o;
  o.num_threads = 1;
  o.spec.seed = 9;
  const Graph model = DropoutModel(true);
  auto sync_run = Trainer::Create(model, o), async_run = Trainer::Create(model, o);
  ASSERT_TRUE(sync_run.ok() && async_run.ok());
  const Tensor target = Ramp({8, 3}, 0.05f);
  std::vector<double> want;
  for (int s = 1; s <= 5; ++s) {
    const std::map<std::string, Tensor> x = {{"x", Ramp({8, 4}, 0.1f * static_cast<float>(s))}};
    auto l = (*sync_run)->Step(x, target);
    ASSERT_TRUE(l.ok()) << l.status();
    want.push_back(*l);
    ASSERT_TRUE((*async_run)->StepAsync(x, target).ok());
    if (s == 2) {
      auto first = (*async_run)->TakeLosses();
      ASSERT_TRUE(first.ok()) << first.status();
      EXPECT_EQ(*first, std::vector<double>(want.begin(), want.end()));
    }
  }
  auto rest = (*async_run)->TakeLosses();
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(*rest, std::vector<double>(want.begin() + 2, want.end()));
  EXPECT_TRUE((*async_run)->TakeLosses()->empty());
  EXPECT_EQ((*async_run)->steps_taken(), 5);
}

TEST(Checkpoint, NonFiniteTensorNamesTheFirstOffender) {
  Checkpoint c;
  c.params["w"] = Tensor::FromVector<float>({1.f, 2.f}, {2});
  c.state["w/m"] = Tensor::FromVector<float>({0.f, 0.f}, {2});
  c.state["steps"] = Tensor::Scalar<int64_t>(3);  // not floating point: never non-finite
  EXPECT_EQ(NonFiniteTensor(c), "");
  c.state["w/m"].data<float>()[1] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(NonFiniteTensor(c), "optimizer state 'w/m'");
  c.params["w"].data<float>()[0] = std::nanf("");
  EXPECT_EQ(NonFiniteTensor(c), "parameter 'w'");
}

}  // namespace
}  // namespace tandem::training
