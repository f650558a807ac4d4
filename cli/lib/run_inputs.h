// Model inputs from the command line, shared by `tandem run` and `tandem convert`:
// NAME=FILE.npy and SYMBOL=N specs, and random inputs for what the user did not give.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace tandem::cli {

// NAME=VALUE specs -> values by name; a malformed spec is an InvalidArgument error naming
// `flag` and the expected `form` (e.g. "NAME=FILE.npy").
absl::StatusOr<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& specs,
                                                                    const std::string& flag,
                                                                    const std::string& form);
// Reads each named .npy file.
absl::StatusOr<std::map<std::string, Tensor>> ReadNpyFiles(const std::map<std::string, std::string>& files);
// `SYMBOL=N` specs (N >= 0) -> values by symbol.
absl::StatusOr<std::map<std::string, int64_t>> ParseDimSpecs(const std::vector<std::string>& specs,
                                                             const std::string& flag);
// A tensor for input `vi`: floating point from U(-1, 1); integers 0, 1 or 2 (valid ids
// and indices for most models); bools 0 or 1. Symbolic dims take `dims_by_symbol`, else
// `unknown_dim`.
absl::StatusOr<Tensor> RandomTensor(const ValueInfo& vi,
                                    const std::map<std::string, int64_t>& dims_by_symbol,
                                    std::mt19937& rng, int64_t unknown_dim = 1);
// `given` plus a RandomTensor for every input of `inputs` it lacks, in input order from one
// generator seeded with `seed`.
absl::StatusOr<std::map<std::string, Tensor>> AddRandomInputs(const std::vector<ValueInfo>& inputs,
                                                              std::map<std::string, Tensor> given,
                                                              const std::map<std::string, int64_t>& dims_by_symbol,
                                                              unsigned seed, int64_t unknown_dim = 1);

}  // namespace tandem::cli
