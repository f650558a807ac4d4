#include "cli/lib/run_inputs.h"

#include "graph/parse_number.h"
#include "graph/resource_limits.h"
#include "runtime/npy.h"

namespace tandem::cli {

absl::StatusOr<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& specs,
                                                                    const std::string& flag,
                                                                    const std::string& form) {
  std::map<std::string, std::string> values;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return absl::InvalidArgumentError(flag + " expects " + form + ", got '" + spec + "'");
    values[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  return values;
}

absl::StatusOr<std::map<std::string, Tensor>> ReadNpyFiles(const std::map<std::string, std::string>& files) {
  std::map<std::string, Tensor> tensors;
  for (const auto& [name, file] : files) {
    auto t = ReadNpy(file);
    if (!t.ok()) return t.status();
    tensors[name] = std::move(*t);
  }
  return tensors;
}

absl::StatusOr<std::map<std::string, int64_t>> ParseDimSpecs(const std::vector<std::string>& specs,
                                                             const std::string& flag) {
  const std::string form = "SYMBOL=N with N >= 0";
  auto values = ParseAssignments(specs, flag, form);
  if (!values.ok()) return values.status();
  std::map<std::string, int64_t> dims;
  for (const auto& [symbol, text] : *values) {
    auto n = ParseInt64(text, 0);
    if (!n.ok())
      return absl::InvalidArgumentError(flag + " expects " + form + ", got '" + symbol + "=" + text + "'");
    dims[symbol] = *n;
  }
  return dims;
}

absl::StatusOr<Tensor> RandomTensor(const ValueInfo& vi,
                                    const std::map<std::string, int64_t>& dims_by_symbol,
                                    std::mt19937& rng, int64_t unknown_dim) {
  if (vi.kind != ValueKind::kTensor)
    return absl::InvalidArgumentError("input '" + vi.name + "' is " + vi.TypeString() +
                                      "; only tensor inputs can be generated");
  Dims dims;
  for (const Dim& d : vi.shape.dims) {
    if (d.known()) dims.push_back(d.value);
    else {
      auto it = dims_by_symbol.find(d.symbol);
      dims.push_back(it == dims_by_symbol.end() ? unknown_dim : it->second);
    }
  }
  for (DataType t : {DataType::kFloat, vi.dtype}) {  // the float draw, then the cast
    auto bytes = CheckedTensorBytes(t, dims);
    if (!bytes.ok())
      return absl::Status(bytes.status().code(), "random input '" + vi.name + "': " +
                                                     std::string(bytes.status().message()));
  }
  Tensor f = Tensor::Host(DataType::kFloat, dims);
  const bool whole = !IsFloatingPoint(vi.dtype);  // ids, indices, flags: 0, 1 or 2 (bool: 0 or 1)
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::uniform_int_distribution<int> small(0, vi.dtype == DataType::kBool ? 1 : 2);
  for (int64_t i = 0; i < f.numel(); ++i) f.data<float>()[i] = whole ? static_cast<float>(small(rng)) : u(rng);
  return vi.dtype == DataType::kFloat ? f : f.CastTo(vi.dtype);
}

absl::StatusOr<std::map<std::string, Tensor>> AddRandomInputs(const std::vector<ValueInfo>& inputs,
                                                              std::map<std::string, Tensor> given,
                                                              const std::map<std::string, int64_t>& dims_by_symbol,
                                                              unsigned seed, int64_t unknown_dim) {
  std::mt19937 rng(seed);
  for (const ValueInfo& vi : inputs) {
    if (given.count(vi.name)) continue;
    auto t = RandomTensor(vi, dims_by_symbol, rng, unknown_dim);
    if (!t.ok()) return t.status();
    given[vi.name] = std::move(*t);
  }
  return given;
}

}  // namespace tandem::cli
