// Loss fragments (training/losses.h): values against float64 formulas written here, and
// gradients (autograd through the loss rules) against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/session.h"
#include "tests/gradient_check.h"
#include "training/gradient_builder.h"
#include "training/losses.h"

namespace tandem::testing {
namespace {

using training::LossKind;
using training::Reduction;

struct LossGraph {
  Graph g;
  std::string loss;
  std::map<std::string, std::string> grads;  // input -> gradient value
};

// pred (an input, passed through Identity so the loss reads an intermediate) and target.
LossGraph Build(LossKind kind, Reduction r, const Tensor& pred, const Tensor& target,
                bool with_grads, int opset = 17) {
  LossGraph lg;
  Graph& g = lg.g;
  g.opsets[""] = opset;
  g.inputs.push_back(ValueInfo{"pred_in", pred.dtype(), Shape::Of(pred.dims())});
  Node id;
  id.name = "id";
  id.op_type = "Identity";
  id.inputs = {"pred_in"};
  id.outputs = {"pred"};
  g.nodes.push_back(id);
  g.value_info["pred"] = ValueInfo{"pred", pred.dtype(), Shape::Of(pred.dims())};
  auto loss = training::AddLoss(g, kind, "pred", "target", r);
  EXPECT_TRUE(loss.ok()) << loss.status();
  if (!loss.ok()) return lg;
  lg.loss = *loss;
  g.outputs.push_back(ValueInfo{*loss, DataType::kUndefined, Shape::Unknown()});
  if (with_grads) {
    std::vector<std::string> wrt = {"pred_in"};
    if (target.dtype() == DataType::kDouble) wrt.push_back("target");
    auto grads = training::AddGradients(g, *loss, wrt);
    EXPECT_TRUE(grads.ok()) << grads.status();
    if (!grads.ok()) return lg;
    lg.grads = *grads;
    for (const std::string& w : wrt)
      g.outputs.push_back(ValueInfo{grads->at(w), DataType::kUndefined, Shape::Unknown()});
  }
  return lg;
}

absl::StatusOr<std::vector<Tensor>> Run(const Graph& g, const Tensor& pred, const Tensor& target) {
  SessionOptions o;
  o.num_threads = 1;
  o.constant_folding = false;
  auto s = Session::FromGraph(g, o);
  if (!s.ok()) return s.status();
  return (*s)->Run({{"pred_in", pred}, {"target", target}});
}

double RunLoss(LossKind kind, Reduction r, const Tensor& pred, const Tensor& target) {
  LossGraph lg = Build(kind, r, pred, target, false);
  auto out = Run(lg.g, pred, target);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].ElementAsDouble(0) : NAN;
}

// Autograd gradient of pred (and of target when it is float64) vs finite differences.
void CheckLossGradient(LossKind kind, Reduction r, const Tensor& pred, const Tensor& target) {
  LossGraph lg = Build(kind, r, pred, target, true);
  auto out = Run(lg.g, pred, target);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), Dims{});
  const double h = 1e-6;
  std::vector<const Tensor*> checked = {&pred};
  if (target.dtype() == DataType::kDouble) checked.push_back(&target);
  for (size_t k = 0; k < checked.size(); ++k) {
    const Tensor& grad = (*out)[1 + k];
    ASSERT_EQ(grad.dims(), checked[k]->dims());
    for (int64_t e = 0; e < checked[k]->numel(); ++e) {
      Tensor plus = checked[k]->Clone(), minus = checked[k]->Clone();
      plus.data<double>()[e] += h;
      minus.data<double>()[e] -= h;
      double lp = k == 0 ? RunLoss(kind, r, plus, target) : RunLoss(kind, r, pred, plus);
      double lm = k == 0 ? RunLoss(kind, r, minus, target) : RunLoss(kind, r, pred, minus);
      double numeric = (lp - lm) / (2 * h);
      EXPECT_NEAR(grad.data<double>()[e], numeric, 1e-7 + 1e-5 * std::fabs(numeric))
          << training::LossName(kind) << (k ? " target" : " pred") << " element " << e;
    }
  }
}

double Reduce(const std::vector<double>& v, Reduction r) {
  double s = 0;
  for (double x : v) s += x;
  return r == Reduction::kMean ? s / v.size() : s;
}

const Reduction kReductions[] = {Reduction::kMean, Reduction::kSum};

TEST(Losses, FromString) {
  EXPECT_EQ(*training::LossFromString("mse"), LossKind::kMse);
  EXPECT_EQ(*training::LossFromString("l1"), LossKind::kL1);
  EXPECT_EQ(*training::LossFromString("cross_entropy"), LossKind::kCrossEntropy);
  EXPECT_EQ(*training::LossFromString("bce_with_logits"), LossKind::kBceWithLogits);
  auto bad = training::LossFromString("hinge");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("hinge"), std::string::npos);
}

TEST(Losses, MseAndL1) {
  Tensor p = RandomDoubles({4, 3}, 21), t = RandomDoubles({4, 3}, 22);
  t.data<double>()[5] = p.data<double>()[5] + 0.25;  // keep |d| away from 0 for FD
  for (Reduction r : kReductions) {
    std::vector<double> sq, ab;
    for (int64_t i = 0; i < p.numel(); ++i) {
      double d = p.data<double>()[i] - t.data<double>()[i];
      sq.push_back(d * d);
      ab.push_back(std::fabs(d));
    }
    EXPECT_NEAR(RunLoss(LossKind::kMse, r, p, t), Reduce(sq, r), 1e-12);
    EXPECT_NEAR(RunLoss(LossKind::kL1, r, p, t), Reduce(ab, r), 1e-12);
    CheckLossGradient(LossKind::kMse, r, p, t);
    CheckLossGradient(LossKind::kL1, r, p, t);
  }
}

TEST(Losses, BceWithLogits) {
  Tensor p = RandomDoubles({3, 5}, 23, -4, 4), t = RandomDoubles({3, 5}, 24, 0, 1);
  p.data<double>()[0] = 40;  // stability: large |x| must not overflow
  p.data<double>()[1] = -40;
  for (Reduction r : kReductions) {
    std::vector<double> l;
    for (int64_t i = 0; i < p.numel(); ++i) {
      double x = p.data<double>()[i], y = t.data<double>()[i];
      // -[y log s(x) + (1-y) log(1 - s(x))] with log s(x) = -log(1 + e^-x)
      double log_s = -std::log1p(std::exp(-x)), log_1ms = -x - std::log1p(std::exp(-x));
      if (x < 0) log_s = x - std::log1p(std::exp(x)), log_1ms = -std::log1p(std::exp(x));
      l.push_back(-(y * log_s + (1 - y) * log_1ms));
    }
    EXPECT_NEAR(RunLoss(LossKind::kBceWithLogits, r, p, t), Reduce(l, r), 1e-12);
    CheckLossGradient(LossKind::kBceWithLogits, r, p, t);
  }
}

// Cross entropy over class indices; logits [N, C] or [N, C, D].
void CheckCrossEntropy(Dims dims, unsigned seed) {
  Tensor p = RandomDoubles(dims, seed, -2, 2);
  const int64_t n = dims[0], c = dims[1], d = dims.size() > 2 ? dims[2] : 1;
  Dims ld = {n};
  if (dims.size() > 2) ld.push_back(d);
  Tensor t = Tensor::Host(DataType::kInt64, ld);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = (i * 7 + 3) % c;
  for (Reduction r : kReductions) {
    std::vector<double> l;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) {
        double lse = 0;
        for (int64_t k = 0; k < c; ++k) lse += std::exp(p.data<double>()[(i * c + k) * d + j]);
        int64_t y = t.data<int64_t>()[i * d + j];
        l.push_back(std::log(lse) - p.data<double>()[(i * c + y) * d + j]);
      }
    EXPECT_NEAR(RunLoss(LossKind::kCrossEntropy, r, p, t), Reduce(l, r), 1e-12);
    CheckLossGradient(LossKind::kCrossEntropy, r, p, t);
  }
}

// Negative log-likelihood of log-probabilities p (any values work for the gradient).
void CheckNll(Dims dims, unsigned seed) {
  Tensor p = RandomDoubles(dims, seed, -3, 0);
  const int64_t n = dims[0], c = dims[1], d = dims.size() > 2 ? dims[2] : 1;
  Dims ld = {n};
  if (dims.size() > 2) ld.push_back(d);
  Tensor t = Tensor::Host(DataType::kInt64, ld);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int64_t>()[i] = (i * 5 + 1) % c;
  for (Reduction r : kReductions) {
    std::vector<double> l;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < d; ++j) l.push_back(-p.data<double>()[(i * c + t.data<int64_t>()[i * d + j]) * d + j]);
    EXPECT_NEAR(RunLoss(LossKind::kNll, r, p, t), Reduce(l, r), 1e-12);
    CheckLossGradient(LossKind::kNll, r, p, t);
  }
}

TEST(Losses, CrossEntropy) { CheckCrossEntropy({4, 5}, 25); }
TEST(Losses, NegativeLogLikelihood) {
  EXPECT_EQ(*training::LossFromString("nll"), LossKind::kNll);
  CheckNll({4, 5}, 27);
  CheckNll({2, 3, 4}, 28);
}
TEST(Losses, CrossEntropySpatial) { CheckCrossEntropy({2, 3, 4}, 26); }

TEST(Losses, TargetBecomesAnInputAndNamesAreFresh) {
  Graph g;
  g.opsets[""] = 17;
  g.inputs.push_back(ValueInfo{"loss", DataType::kFloat, Shape::Of({2, 3})});  // name clash
  auto l = training::AddLoss(g, LossKind::kCrossEntropy, "loss", "labels", Reduction::kMean);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_NE(*l, "loss");
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[1].name, "labels");
  EXPECT_EQ(g.inputs[1].dtype, DataType::kInt64);
  EXPECT_TRUE(g.Validate().ok());
  EXPECT_FALSE(training::AddLoss(g, LossKind::kMse, "nope", "t", Reduction::kMean).ok());
  Graph old;
  old.opsets[""] = 11;
  old.inputs.push_back(ValueInfo{"p", DataType::kFloat, Shape::Of({2, 3})});
  auto e = training::AddLoss(old, LossKind::kCrossEntropy, "p", "t", Reduction::kMean);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(std::string(e.status().message()).find("opset >= 12"), std::string::npos);
}

// The loss gradient rules on their own, through the shared harness.
TEST(Losses, SoftmaxCrossEntropyRuleWithWeightsIgnoreIndexAndLogProb) {
  for (const char* red : {"mean", "sum", "none"})
    for (int out = 0; out < 2; ++out) {
      GradCase c;
      c.op = "SoftmaxCrossEntropyLoss";
      c.opset = 13;
      Tensor labels = Tensor::FromVector<int64_t>({0, 2, 1, 2, 3, 1}, {2, 3});
      c.inputs = {RandomDoubles({2, 4, 3}, 27, -2, 2), labels, RandomDoubles({4}, 28, 0.5, 2)};
      c.differentiate = {true, false, false};
      c.attributes = {{"reduction", StringAttr(red)}, {"ignore_index", IntAttr(2)}};
      c.num_outputs = 2;
      c.loss_output = out;  // 1: the log_prob output's gradient path
      EXPECT_EQ(CheckGradients(c), "") << red << " output " << out;
    }
}

TEST(Losses, NegativeLogLikelihoodRuleWithWeightsAndIgnoreIndex) {
  for (const char* red : {"mean", "sum", "none"})
    for (bool weighted : {false, true}) {
      GradCase c;
      c.op = "NegativeLogLikelihoodLoss";
      c.opset = 13;
      Tensor labels = Tensor::FromVector<int64_t>({0, 2, 1, 2, 3, 1}, {2, 3});
      c.inputs = {RandomDoubles({2, 4, 3}, 31, -3, 0), labels};
      if (weighted) c.inputs.push_back(RandomDoubles({4}, 32, 0.5, 2));
      c.differentiate = weighted ? std::vector<bool>{true, false, false} : std::vector<bool>{true, false};
      c.attributes = {{"reduction", StringAttr(red)}};
      if (weighted) c.attributes["ignore_index"] = IntAttr(2);
      EXPECT_EQ(CheckGradients(c), "") << red << (weighted ? " weighted, ignore_index 2" : "");
    }
}

TEST(Losses, BceWithLogitsRuleReductionNone) {
  GradCase c;
  c.op = "BCEWithLogitsLoss";
  c.domain = "ai.tandem";
  c.inputs = {RandomDoubles({2, 5}, 29, -3, 3), RandomDoubles({2, 5}, 30, 0, 1)};
  c.attributes = {{"reduction", StringAttr("none")}};
  EXPECT_EQ(CheckGradients(c), "");
}

}  // namespace
}  // namespace tandem::testing
