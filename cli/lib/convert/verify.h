// Checks a converted model against its original: both run on Tandem's CPU provider with
// the same inputs (given ones, the rest random), and each output is compared.
// A float output passes when max|converted - original| <= atol + rtol * max|original|
// (a tolerance relative to the output's scale, so near-zero elements do not dominate);
// other types must match exactly. NaN matches NaN; an infinity must be matched exactly
// (and does not count towards the scale).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/tensor.h"

namespace tandem::convert {

struct VerifyOptions {
  std::map<std::string, Tensor> feeds;          // inputs given by the user
  std::map<std::string, int64_t> dims;          // symbolic dims of random inputs
  int64_t unknown_dim = 2;                      // the others (2: batch-dependent bugs show)
  std::map<std::string, int64_t> fixed_dims;    // --fix-dims, applied to the original
  unsigned seed = 0;
  double rtol = 1e-4, atol = 1e-5;
};

struct OutputDifference {
  std::string name;
  std::string shape;     // e.g. [1,10]
  double max_abs = 0;    // max |converted - original|
  double scale = 0;      // max |original|
  bool within = false;   // inside the tolerance
  // A float output [rows, classes > 1]: rows whose largest value is in the same column.
  int64_t rows = 0, top1_kept = 0;
  double max_rel() const { return scale > 0 ? max_abs / scale : max_abs; }
};

absl::StatusOr<std::vector<OutputDifference>> CompareModels(const std::string& original_path,
                                                            const std::string& converted_path,
                                                            const VerifyOptions& options);

}  // namespace tandem::convert
