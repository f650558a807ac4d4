// Writes a loss history (per-epoch train and optional validation loss) as an SVG line
// plot with a log-scale y axis.
#pragma once
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tandem {

absl::Status WriteLossPlotSvg(const std::string& path, const std::vector<double>& train,
                              const std::vector<double>& validation, const std::string& title);

}  // namespace tandem
