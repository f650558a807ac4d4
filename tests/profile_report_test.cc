// tandem profile's arithmetic on synthetic timings: the CPU/GPU crossover, per-op-type
// totals, the batch chart; and the Chrome trace JSON of given events.
#include <gtest/gtest.h>

#include "cli/lib/profile_report.h"
#include "runtime/trace.h"

namespace tandem::cli {
namespace {

TEST(ProfileReport, CrossoverIsTheSmallestBatchWhereTheGpuWins) {
  const std::vector<int64_t> batches = {1, 8, 64, 512};
  // Launch-bound GPU: slower at 1 and 8, faster from 64 on.
  EXPECT_EQ(Crossover(batches, {10, 40, 300, 2400}, {50, 55, 90, 200}), std::optional<int64_t>(64));
  // The GPU never wins (ties do not count).
  EXPECT_EQ(Crossover(batches, {10, 40, 300, 2400}, {10, 41, 300, 2500}), std::nullopt);
  // Faster everywhere: the first size.
  EXPECT_EQ(Crossover(batches, {10, 40, 300, 2400}, {5, 6, 7, 8}), std::optional<int64_t>(1));
  // A noisy sweep that wins at 8, loses at 64, wins again: the smallest win is reported.
  EXPECT_EQ(Crossover(batches, {10, 40, 300, 2400}, {20, 30, 400, 100}), std::optional<int64_t>(8));
  EXPECT_EQ(Crossover({}, {}, {}), std::nullopt);
}

TEST(ProfileReport, ByOpTypeAveragesOverSteps) {
  std::vector<StepProfile> profile = {{"c1", "Conv", "cpu", 300, 3}, {"c2", "Conv", "cpu", 150, 3},
                                      {"r", "Relu", "cpu", 30, 3}};
  auto by_op = ByOpType(profile, 3);
  EXPECT_DOUBLE_EQ(by_op["Conv"].us_per_step, 150);
  EXPECT_EQ(by_op["Conv"].nodes, 2);
  EXPECT_DOUBLE_EQ(by_op["Relu"].us_per_step, 10);
}

TEST(ProfileReport, BatchChartHasOneLinePerDevice) {
  const std::string svg = BatchChartSvg({1, 8, 64}, {{"cpu", {10, 40, 300}}, {"cuda", {50, 55, 90}}}, "t");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  EXPECT_EQ(lines, 2u);
  EXPECT_NE(svg.find(">cuda<"), std::string::npos);
}

TEST(ChromeTrace, EventsRelativeToTheFirstWithOneProcessPerProvider) {
  std::vector<TraceEvent> events = {{"conv \"1\"", "Conv", "cpu", "[1,3]", 1000.0, 25.5},
                                    {"mm", "MatMul", "cuda", "[2,2] [2,2]", 1030.0, 4.0}};
  const std::string json = ChromeTraceJson(events);
  EXPECT_NE(json.find("\"name\": \"conv \\\"1\\\"\""), std::string::npos);  // escaped quotes
  EXPECT_NE(json.find("\"ts\": 0.000, \"dur\": 25.500, \"pid\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"ts\": 30.000, \"dur\": 4.000, \"pid\": 2"), std::string::npos);
  EXPECT_NE(json.find("\"args\": {\"name\": \"tandem cuda\"}"), std::string::npos);
}

}  // namespace
}  // namespace tandem::cli
