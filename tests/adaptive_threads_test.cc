// A host session's runs under (simulated) load: the thread governor's trials run the model
// with a plan built for the smaller team, and every run's result stays right.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

constexpr int64_t kRows = 192, kInner = 384, kCols = 256;

// y = x @ W with W [kInner, kCols] an initializer: a product oneDNN runs on the team.
onnx::ModelProto MatMulModel() {
  onnx::ModelProto m = EmptyModel(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddFloatInitializer(g, "w", {kInner, kCols}, 0.01f);
  AddNode(g, "MatMul", "product", {"x", "w"}, {"y"});
  SetFloatType(g->add_input(), "x", {kRows, kInner});
  SetFloatType(g->add_output(), "y", {kRows, kCols});
  return m;
}

Tensor Input() {
  Tensor x = Tensor::Host(DataType::kFloat, {kRows, kInner});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(std::sin(0.37 * i));
  return x;
}

// Largest difference from x @ W in float64, over the largest reference value.
double ErrorAtScale(const Tensor& x, const Tensor& y) {
  const std::vector<double> w = InitializerValues(kInner * kCols, 0.01f);
  double worst = 0, scale = 0;
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) {
      double want = 0;
      for (int64_t k = 0; k < kInner; ++k) want += x.data<float>()[r * kInner + k] * w[k * kCols + c];
      worst = std::max(worst, std::abs(want - y.data<float>()[r * kCols + c]));
      scale = std::max(scale, std::abs(want));
    }
  return worst / scale;
}

// A run-queue wait that grows by `threads` threads' worth of the wall time: load all along.
std::function<double()> SimulatedLoad(double threads) {
  const auto start = std::chrono::steady_clock::now();
  return [start, threads] {
    return threads * std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  };
}

std::unique_ptr<Session> Load(const SessionOptions& options) {
  auto s = Session::FromGraph(ImportTestModel(MatMulModel()), options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(AdaptiveThreads, UnderLoadASmallerTeamRunsAndEveryResultIsRight) {
  SessionOptions o;
  o.num_threads = 2;
  o.run_queue_wait = SimulatedLoad(0.8);
  auto s = Load(o);
  ASSERT_TRUE(s);
  const Tensor x = Input();
  const Tensor first = (*s->Run({{"x", x}}))[0];
  ASSERT_LT(ErrorAtScale(x, first), 1e-5);
  // Load from the start: a trial on one thread begins after a window of runs on two.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (s->runs_per_team_size()[1] < 1 + ThreadGovernor::kCompareRuns && std::chrono::steady_clock::now() < until) {
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    for (int64_t i = 0; i < y.numel(); ++i)  // each team's plan gives the first run's result
      ASSERT_NEAR(y.data<float>()[i], first.data<float>()[i], 1e-5f * (1 + std::abs(first.data<float>()[i])))
          << "element " << i;
  }
  const auto teams = s->runs_per_team_size();
  EXPECT_GE(teams.at(1), 1 + ThreadGovernor::kCompareRuns) << s->thread_governor_status();
  EXPECT_GT(teams.at(2), 0);
  EXPECT_NE(s->thread_governor_status().find("of 2 threads"), std::string::npos) << s->thread_governor_status();
}

TEST(AdaptiveThreads, OffByOptionEnvironmentOrProfiling) {
  for (const char* how : {"option", "environment", "profiling"}) {
    SessionOptions o;
    o.num_threads = 2;
    o.run_queue_wait = SimulatedLoad(1.5);
    o.adaptive_threads = std::string(how) != "option";
    o.profiling = std::string(how) == "profiling";
    if (std::string(how) == "environment") setenv("TANDEM_ADAPTIVE_THREADS", "0", 1);
    auto s = Load(o);
    unsetenv("TANDEM_ADAPTIVE_THREADS");
    ASSERT_TRUE(s);
    const Tensor x = Input();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (std::chrono::steady_clock::now() < until) ASSERT_TRUE(s->Run({{"x", x}}).ok());
    const auto teams = s->runs_per_team_size();
    EXPECT_EQ(teams.size(), 1u) << how;
    EXPECT_EQ(teams.count(2), 1u) << how;
    EXPECT_EQ(s->thread_governor_status().empty(), std::string(how) != "profiling") << how;
  }
}

}  // namespace
}  // namespace tandem
