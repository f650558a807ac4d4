// What `tandem profile` computes from its timings, apart from running anything: per-op-type
// totals, the CPU/GPU crossover of a batch-size sweep, and the sweep's SVG chart.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/plan.h"

namespace tandem::cli {

// Microseconds per step and node count by op type, from a profile over `steps` steps.
struct OpTypeTime {
  double us_per_step = 0;
  int64_t nodes = 0;
};
std::map<std::string, OpTypeTime> ByOpType(const std::vector<StepProfile>& profile, int64_t steps);

// The smallest batch size at which the accelerator's time per step is below the CPU's, or
// nullopt when the CPU wins (or ties) at every size. Sizes and times are parallel vectors.
std::optional<int64_t> Crossover(const std::vector<int64_t>& batch_sizes, const std::vector<double>& cpu_us,
                                 const std::vector<double>& accelerator_us);

// An SVG line chart of microseconds per sample against batch size (both axes log10), one
// line per device (`series`: device -> time per step for each batch size).
std::string BatchChartSvg(const std::vector<int64_t>& batch_sizes,
                          const std::map<std::string, std::vector<double>>& series, const std::string& title);

}  // namespace tandem::cli
