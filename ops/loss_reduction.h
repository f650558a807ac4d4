// The "reduction" attribute of the fused element-wise loss ops (ai.tandem
// BCEWithLogitsLoss, MSELoss and their *Grad ops), read alike by every provider.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "graph/node.h"

namespace tandem {

enum class LossReduction { kNone, kSum, kMean };

// "mean" when the attribute is absent; an error naming the value otherwise unknown.
inline absl::StatusOr<LossReduction> ParseLossReduction(const Node& n) {
  const std::string r = n.attr_string("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  return absl::InvalidArgumentError("attribute 'reduction' must be none, sum or mean, got '" + r + "'");
}

}  // namespace tandem
