// ai.tandem optimizer kernels against the torch.optim update rules, written out step by
// step in double precision (from the PyTorch documentation's pseudo-code).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "tests/gradient_check.h"
#include "tests/test_models.h"

namespace tandem::testing {
namespace {

// One optimizer node: inputs param, grad, state..., step, lr; output the param alias.
std::unique_ptr<Session> MakeUpdate(const std::string& op, int num_state, DataType dt,
                                    std::map<std::string, Attribute> attrs) {
  Graph g;
  g.name = op;
  g.opsets[""] = 17;
  g.opsets["ai.tandem"] = 1;
  Node n;
  n.name = "update";
  n.op_type = op;
  n.domain = "ai.tandem";
  n.attributes = std::move(attrs);
  std::vector<std::string> names = {"param", "grad"};
  for (int i = 0; i < num_state; ++i) names.push_back("state" + std::to_string(i));
  for (const std::string& s : names) {
    g.inputs.push_back(ValueInfo{s, dt, Shape::Unknown()});
    n.inputs.push_back(s);
  }
  g.inputs.push_back(ValueInfo{"step", DataType::kInt64, Shape::Of({})});
  g.inputs.push_back(ValueInfo{"lr", DataType::kFloat, Shape::Of({})});
  n.inputs.push_back("step");
  n.inputs.push_back("lr");
  n.outputs = {"param_out"};
  g.nodes.push_back(n);
  g.outputs.push_back(ValueInfo{"param_out", dt, Shape::Unknown()});
  SessionOptions o;
  o.num_threads = 1;
  auto s = Session::FromGraph(g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

constexpr int kN = 13;
constexpr int kSteps = 6;

// Gradient fed at step t (1-based), element i.
double GradAt(int t, int i) { return std::sin(0.7 * i + 1.1 * t) * (1.0 + 0.3 * t) + 0.05 * i; }
double ParamInit(int i) { return std::cos(0.9 * i) * 0.8; }

struct Hyper {
  float lr = 0.05f, momentum = 0.9f, dampening = 0.f, beta1 = 0.9f, beta2 = 0.999f,
        eps = 1e-8f, wd = 0.f;
  bool nesterov = false;
};

// torch.optim reference, double precision. kind: sgd, momentum, adam, adamw.
std::vector<double> Reference(const std::string& kind, const Hyper& h) {
  const double lr = h.lr, mu = h.momentum, damp = h.dampening, b1 = h.beta1, b2 = h.beta2,
               eps = h.eps, wd = h.wd;
  std::vector<double> p(kN), buf(kN, 0), m(kN, 0), v(kN, 0);
  for (int i = 0; i < kN; ++i) p[i] = ParamInit(i);
  for (int t = 1; t <= kSteps; ++t) {
    for (int i = 0; i < kN; ++i) {
      double g = GradAt(t, i);
      if (kind == "sgd" || kind == "momentum") {
        // torch.optim.SGD
        if (wd != 0) g = g + wd * p[i];
        if (kind == "momentum") {
          if (t > 1) buf[i] = mu * buf[i] + (1 - damp) * g;
          else buf[i] = g;
          if (h.nesterov) g = g + mu * buf[i];
          else g = buf[i];
        }
        p[i] = p[i] - lr * g;
      } else {
        // torch.optim.Adam / AdamW
        if (kind == "adamw") p[i] = p[i] - lr * wd * p[i];
        else if (wd != 0) g = g + wd * p[i];
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        double mhat = m[i] / (1 - std::pow(b1, t));
        double vhat = v[i] / (1 - std::pow(b2, t));
        p[i] = p[i] - lr * mhat / (std::sqrt(vhat) + eps);
      }
    }
  }
  return p;
}

// Runs the kernel kSteps times on the same buffers (updated in place).
std::vector<double> RunKernel(const std::string& op, int num_state, DataType dt, const Hyper& h) {
  std::map<std::string, Attribute> attrs = {
      {"momentum", FloatAttr(h.momentum)}, {"dampening", FloatAttr(h.dampening)},
      {"beta1", FloatAttr(h.beta1)},       {"beta2", FloatAttr(h.beta2)},
      {"epsilon", FloatAttr(h.eps)},       {"weight_decay", FloatAttr(h.wd)},
      {"nesterov", IntAttr(h.nesterov)}};
  auto s = MakeUpdate(op, num_state, dt, attrs);
  if (!s) return {};
  Tensor param = Tensor::Host(DataType::kDouble, {kN});
  for (int i = 0; i < kN; ++i) param.data<double>()[i] = ParamInit(i);
  param = param.CastTo(dt);
  std::vector<Tensor> state;
  for (int i = 0; i < num_state; ++i) state.push_back(Tensor::Host(dt, {kN}));
  for (int t = 1; t <= kSteps; ++t) {
    Tensor grad = Tensor::Host(DataType::kDouble, {kN});
    for (int i = 0; i < kN; ++i) grad.data<double>()[i] = GradAt(t, i);
    std::map<std::string, Tensor> feeds = {{"param", param},
                                           {"grad", grad.CastTo(dt)},
                                           {"step", Tensor::Scalar<int64_t>(t)},
                                           {"lr", Tensor::Scalar<float>(h.lr)}};
    for (int i = 0; i < num_state; ++i) feeds["state" + std::to_string(i)] = state[i];
    auto out = s->Run(feeds);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return {};
    EXPECT_EQ((*out)[0].raw(), param.raw()) << "output must alias the param buffer";
  }
  std::vector<double> r(kN);
  for (int i = 0; i < kN; ++i) r[i] = param.ElementAsDouble(i);
  return r;
}

void Compare(const std::string& op, const std::string& kind, int num_state, const Hyper& h) {
  std::vector<double> want = Reference(kind, h);
  for (DataType dt : {DataType::kDouble, DataType::kFloat}) {
    double tol = dt == DataType::kDouble ? 1e-12 : 2e-5;
    std::vector<double> got = RunKernel(op, num_state, dt, h);
    ASSERT_EQ(got.size(), want.size()) << op;
    double moved = 0;
    for (int i = 0; i < kN; ++i) {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i])))
          << op << " " << DataTypeName(dt) << " element " << i;
      moved += std::fabs(want[i] - ParamInit(i));
    }
    EXPECT_GT(moved, 1e-3) << "the reference should move the parameters";
  }
}

TEST(OptimizerOps, SGD) { Compare("SGDUpdate", "sgd", 0, Hyper{}); }
TEST(OptimizerOps, SGDWeightDecay) {
  Hyper h;
  h.wd = 0.1f;
  Compare("SGDUpdate", "sgd", 0, h);
}
TEST(OptimizerOps, Momentum) {
  Hyper h;
  h.wd = 0.01f;
  Compare("MomentumUpdate", "momentum", 1, h);
}
TEST(OptimizerOps, MomentumDampening) {
  Hyper h;
  h.dampening = 0.3f;
  h.momentum = 0.8f;
  Compare("MomentumUpdate", "momentum", 1, h);
}
TEST(OptimizerOps, MomentumNesterov) {
  Hyper h;
  h.nesterov = true;
  h.wd = 0.05f;
  Compare("MomentumUpdate", "momentum", 1, h);
}
TEST(OptimizerOps, Adam) { Compare("AdamUpdate", "adam", 2, Hyper{}); }
TEST(OptimizerOps, AdamL2WeightDecayAndBetas) {
  Hyper h;
  h.wd = 0.1f;
  h.beta1 = 0.8f;
  h.beta2 = 0.95f;
  h.eps = 1e-3f;  // large enough to matter
  Compare("AdamUpdate", "adam", 2, h);
}
TEST(OptimizerOps, AdamWDecoupledWeightDecay) {
  Hyper h;
  h.wd = 0.2f;
  Compare("AdamWUpdate", "adamw", 2, h);
  // Decoupled decay differs from Adam's L2 decay.
  std::vector<double> a = Reference("adam", h), w = Reference("adamw", h);
  double diff = 0;
  for (int i = 0; i < kN; ++i) diff += std::fabs(a[i] - w[i]);
  EXPECT_GT(diff, 1e-4);
}

TEST(OptimizerOps, LargeTensorParallelPath) {
  // > 32768 elements takes the OpenMP path; compare with the serial formula.
  const int64_t n = 70000;
  auto s = MakeUpdate("AdamUpdate", 2, DataType::kFloat, {});
  ASSERT_TRUE(s);
  Tensor p = Tensor::Host(DataType::kFloat, {n}), g = Tensor::Host(DataType::kFloat, {n});
  for (int64_t i = 0; i < n; ++i) {
    p.data<float>()[i] = std::cos(0.001f * i);
    g.data<float>()[i] = std::sin(0.01f * i);
  }
  Tensor p0 = p.Clone();
  Tensor m = Tensor::Host(DataType::kFloat, {n}), v = Tensor::Host(DataType::kFloat, {n});
  SessionOptions o;
  auto out = s->Run({{"param", p}, {"grad", g}, {"state0", m}, {"state1", v},
                     {"step", Tensor::Scalar<int64_t>(1)}, {"lr", Tensor::Scalar<float>(0.1f)}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Step 1 of Adam moves every param by ~lr * sign(g).
  for (int64_t i = 0; i < n; i += 997) {
    float gi = g.data<float>()[i];
    double expect = p0.data<float>()[i] - 0.1 * gi / (std::fabs(gi) + 1e-8);
    EXPECT_NEAR(p.data<float>()[i], expect, 1e-5) << i;
  }
}

// One AdamUpdate node for two parameters (13 and 5 elements): each follows torch.optim.
TEST(OptimizerOps, SeveralParametersInOneNode) {
  const std::vector<std::string> names = {"p0", "g0", "m0", "v0", "p1", "g1", "m1", "v1", "step", "lr"};
  std::vector<ValueInfo> inputs;
  for (const std::string& n : names)
    inputs.push_back(ValueInfo{n, n == "step" ? DataType::kInt64 : DataType::kFloat, Shape::Unknown()});
  Graph g = TandemOpGraph("AdamUpdate", inputs, {"o0", "o1"});
  auto s = Session::FromGraph(g);
  ASSERT_TRUE(s.ok()) << s.status();
  const int sizes[2] = {kN, 5};
  std::vector<Tensor> params, state;
  for (int k = 0; k < 2; ++k) {
    params.push_back(Tensor::Host(DataType::kFloat, {sizes[k]}));
    for (int i = 0; i < sizes[k]; ++i) params[k].data<float>()[i] = static_cast<float>(ParamInit(i));
    state.push_back(Tensor::Host(DataType::kFloat, {sizes[k]}));
    state.push_back(Tensor::Host(DataType::kFloat, {sizes[k]}));
  }
  const Hyper h;
  for (int t = 1; t <= kSteps; ++t) {
    std::map<std::string, Tensor> feeds = {{"step", Tensor::Scalar<int64_t>(t)}, {"lr", Tensor::Scalar<float>(h.lr)}};
    for (int k = 0; k < 2; ++k) {
      Tensor grad = Tensor::Host(DataType::kFloat, {sizes[k]});
      for (int i = 0; i < sizes[k]; ++i) grad.data<float>()[i] = static_cast<float>(GradAt(t, i));
      const std::string n = std::to_string(k);
      feeds["p" + n] = params[k];
      feeds["g" + n] = grad;
      feeds["m" + n] = state[2 * k];
      feeds["v" + n] = state[2 * k + 1];
    }
    auto out = (*s)->Run(feeds);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[1].raw(), params[1].raw()) << "each output aliases its param";
  }
  const std::vector<double> want = Reference("adam", h);
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < sizes[k]; ++i)
      EXPECT_NEAR(params[k].data<float>()[i], want[i], 2e-5 * std::max(1.0, std::fabs(want[i])))
          << "parameter " << k << " element " << i;
  // Inputs that do not split into (param, grad, m, v) groups are refused.
  std::vector<ValueInfo> odd(inputs.begin(), inputs.end());
  odd.erase(odd.begin() + 7);  // v1
  auto bad = Session::FromGraph(TandemOpGraph("AdamUpdate", odd, {"o0", "o1"}));
  ASSERT_TRUE(bad.ok()) << bad.status();
  std::map<std::string, Tensor> feeds = {{"step", Tensor::Scalar<int64_t>(1)}, {"lr", Tensor::Scalar<float>(0.1f)}};
  for (const ValueInfo& vi : odd)
    if (!feeds.count(vi.name)) feeds[vi.name] = Tensor::Host(DataType::kFloat, {3});
  auto refused = (*bad)->Run(feeds);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(std::string(refused.status().message()).find("per parameter"), std::string::npos) << refused.status();
}

TEST(OptimizerOps, RejectsBadInputs) {
  auto s = MakeUpdate("MomentumUpdate", 1, DataType::kFloat, {});
  ASSERT_TRUE(s);
  Tensor p = Tensor::Host(DataType::kFloat, {3});
  auto bad_step = s->Run({{"param", p}, {"grad", Tensor::Host(DataType::kFloat, {3})},
                          {"state0", Tensor::Host(DataType::kFloat, {3})},
                          {"step", Tensor::Scalar<int64_t>(0)}, {"lr", Tensor::Scalar<float>(1)}});
  ASSERT_FALSE(bad_step.ok());
  EXPECT_NE(std::string(bad_step.status().message()).find("step must be >= 1"), std::string::npos)
      << bad_step.status();
  auto bad_shape = s->Run({{"param", p}, {"grad", Tensor::Host(DataType::kFloat, {4})},
                           {"state0", Tensor::Host(DataType::kFloat, {3})},
                           {"step", Tensor::Scalar<int64_t>(1)}, {"lr", Tensor::Scalar<float>(1)}});
  ASSERT_FALSE(bad_shape.ok());
  EXPECT_NE(std::string(bad_shape.status().message()).find("grad has shape [4]"), std::string::npos)
      << bad_shape.status();
}

// GlobalNormClip(g0, g1, max_norm) -> (g0', g1', norm)
std::vector<Tensor> Clip(const Tensor& a, const Tensor& b, float max_norm, bool as_attribute = false) {
  std::vector<ValueInfo> inputs = {ValueInfo{"a", a.dtype(), Shape::Unknown()},
                                   ValueInfo{"b", b.dtype(), Shape::Unknown()}};
  if (!as_attribute) inputs.push_back(ValueInfo{"max_norm", DataType::kFloat, Shape::Of({})});
  Graph g = TandemOpGraph("GlobalNormClip", inputs, {"ca", "cb", "norm"});
  if (as_attribute) g.nodes[0].attributes["max_norm"] = FloatAttr(max_norm);
  auto s = Session::FromGraph(g);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return {};
  std::map<std::string, Tensor> feeds = {{"a", a}, {"b", b}};
  if (!as_attribute) feeds["max_norm"] = Tensor::Scalar<float>(max_norm);
  auto out = (*s)->Run(feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

TEST(OptimizerOps, GlobalNormClip) {
  for (DataType dt : {DataType::kDouble, DataType::kFloat}) {
    Tensor a = RandomDoubles({3, 4}, 11).CastTo(dt), b = RandomDoubles({5}, 12).CastTo(dt);
    double sq = 0;
    for (const Tensor* t : {&a, &b})
      for (int64_t i = 0; i < t->numel(); ++i) sq += t->ElementAsDouble(i) * t->ElementAsDouble(i);
    const double norm = std::sqrt(sq);
    // Clipping: scale = max_norm / (norm + 1e-6); max_norm as input or attribute.
    auto out = Clip(a, b, 0.5f, dt == DataType::kFloat);
    ASSERT_EQ(out.size(), 3u);
    const double scale = 0.5 / (norm + 1e-6);
    const double tol = dt == DataType::kDouble ? 1e-12 : 1e-6;
    EXPECT_NEAR(out[2].ElementAsDouble(0), norm, tol * norm);
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(out[0].ElementAsDouble(i), a.ElementAsDouble(i) * scale, tol);
    for (int64_t i = 0; i < b.numel(); ++i) EXPECT_NEAR(out[1].ElementAsDouble(i), b.ElementAsDouble(i) * scale, tol);
    // Below the threshold: unchanged.
    out = Clip(a, b, static_cast<float>(norm * 2));
    ASSERT_EQ(out.size(), 3u);
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(out[0].ElementAsDouble(i), a.ElementAsDouble(i));
    for (int64_t i = 0; i < b.numel(); ++i) EXPECT_EQ(out[1].ElementAsDouble(i), b.ElementAsDouble(i));
  }
}

}  // namespace
}  // namespace tandem::testing
