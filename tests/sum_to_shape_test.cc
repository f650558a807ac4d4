// SumToShape (the bias and broadcast gradient) against a float64 reference loop, for the
// column-sum fast path and the general broadcast path, serial and with per-thread partials.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem::testing {
namespace {

std::unique_ptr<Session> MakeSumToShape(int threads) {
  Graph g = TandemOpGraph("SumToShape", {ValueInfo{"dy", DataType::kFloat, Shape::Unknown()},
                                         ValueInfo{"like", DataType::kFloat, Shape::Unknown()}},
                          {"dx"});
  SessionOptions o;
  o.num_threads = threads;
  auto s = Session::FromGraph(g, o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// Sum of dy over the dims where target (right-aligned) is 1, in double.
std::vector<double> Reference(const std::vector<float>& dy, const Dims& dims, const Dims& target) {
  const size_t off = dims.size() - target.size();
  std::vector<double> out(static_cast<size_t>(NumElements(target)), 0.0);
  std::vector<int64_t> idx(dims.size(), 0);
  for (size_t linear = 0; linear < dy.size(); ++linear) {
    int64_t rem = static_cast<int64_t>(linear), t = 0, stride = 1;
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
    }
    for (int d = static_cast<int>(target.size()) - 1; d >= 0; --d) {
      t += (target[d] == 1 ? 0 : idx[off + d]) * stride;
      stride *= target[d];
    }
    out[static_cast<size_t>(t)] += dy[linear];
  }
  return out;
}

struct Case {
  Dims dims, target;
};

TEST(SumToShape, MatchesFloat64Reference) {
  const std::vector<Case> cases = {
      {{7, 5}, {5}},                  // column sum, serial
      {{40000, 5}, {5}},              // column sum, per-thread partials
      {{1027, 384}, {384}},           // a linear layer's bias: float blocks of rows, a short last one
      {{40000, 1}, {1, 1}},           // one column
      {{4, 300, 20}, {1, 20}},        // several leading dims
      {{2, 3, 4}, {3, 1}},            // general path, small
      {{3, 64, 20, 20}, {64, 1, 1}},  // conv bias: rows summed to one element, partials
      {{200, 300}, {200, 1}},         // trailing dim reduced
      {{6, 50, 7, 9}, {50, 1, 9}},    // mixed kept/reduced
      {{1, 3}, {3}},                  // batch 1: only 1-sized dims differ (a reshape)
      {{1, 20, 1}, {20, 1}},          // the same with a trailing 1
  };
  for (int threads : {1, 2}) {
    auto s = MakeSumToShape(threads);
    ASSERT_TRUE(s);
    for (const Case& c : cases) {
      std::vector<float> dy(static_cast<size_t>(NumElements(c.dims)));
      for (size_t i = 0; i < dy.size(); ++i)
        dy[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) + 0.01 * static_cast<double>(i % 17));
      auto out = s->Run({{"dy", Tensor::FromVector(dy, c.dims)},
                         {"like", Tensor::Host(DataType::kFloat, c.target)}});
      ASSERT_TRUE(out.ok()) << out.status();
      const Tensor& got = (*out)[0];
      const std::string what = DimsToString(c.dims) + " -> " + DimsToString(c.target) +
                               ", threads " + std::to_string(threads);
      ASSERT_EQ(got.dims(), c.target) << what;
      std::vector<double> want = Reference(dy, c.dims, c.target);
      double magnitude = 0;
      for (double w : want) magnitude = std::max(magnitude, std::fabs(w));
      ASSERT_GT(magnitude, 0.1) << what;  // the sums are not trivially near zero
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got.data<float>()[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << what << " at " << i;
    }
  }
}

TEST(SumToShape, EmptyTensors) {
  auto s = MakeSumToShape(2);
  ASSERT_TRUE(s);
  // Empty target (dY empty too), and empty dY summed into zeros.
  auto empty = s->Run({{"dy", Tensor::Host(DataType::kFloat, {4, 0})},
                       {"like", Tensor::Host(DataType::kFloat, {0})}});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[0].dims(), Dims({0}));
  auto zeros = s->Run({{"dy", Tensor::Host(DataType::kFloat, {0, 3})},
                       {"like", Tensor::Host(DataType::kFloat, {3})}});
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  ASSERT_EQ((*zeros)[0].dims(), Dims({3}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*zeros)[0].data<float>()[i], 0.f);
}

TEST(SumToShape, RefusesShapesThatDoNotBroadcast) {
  auto s = MakeSumToShape(1);
  ASSERT_TRUE(s);
  auto out = s->Run({{"dy", Tensor::Host(DataType::kFloat, {4, 3})},
                     {"like", Tensor::Host(DataType::kFloat, {2})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(std::string(out.status().message()).find("cannot sum [4,3] down to [2]"), std::string::npos)
      << out.status();
}

}  // namespace
}  // namespace tandem::testing
