#include "cli/lib/convert/verify.h"

#include <cmath>

#include "cli/lib/run_inputs.h"
#include "runtime/session.h"

namespace tandem::convert {

namespace {

absl::StatusOr<std::unique_ptr<Session>> Load(const std::string& path,
                                              const std::map<std::string, int64_t>& fixed_dims) {
  SessionOptions so;
  so.import.fixed_dims = fixed_dims;
  return Session::Load(path, so);
}

OutputDifference Compare(const std::string& name, const Tensor& converted, const Tensor& original,
                         const VerifyOptions& options) {
  OutputDifference d;
  d.name = name;
  d.shape = DimsToString(original.dims());
  const bool is_float = IsFloatingPoint(original.dtype());
  bool mismatch = false;
  for (int64_t i = 0; i < original.numel(); ++i) {
    const double a = converted.ElementAsDouble(i), b = original.ElementAsDouble(i);
    if (std::isnan(a) || std::isnan(b)) {
      mismatch |= std::isnan(a) != std::isnan(b);
      continue;
    }
    if (std::isinf(a) || std::isinf(b)) {  // exact, and kept out of the scale
      mismatch |= a != b;
      continue;
    }
    d.max_abs = std::max(d.max_abs, std::fabs(a - b));
    d.scale = std::max(d.scale, std::fabs(b));
    if (!is_float && a != b) mismatch = true;
  }
  d.within = !mismatch && (is_float ? d.max_abs <= options.atol + options.rtol * d.scale : true);
  if (is_float && original.rank() == 2 && original.dim(1) > 1) {
    const int64_t classes = original.dim(1);
    d.rows = original.dim(0);
    for (int64_t r = 0; r < d.rows; ++r) {
      int64_t a = 0, b = 0;
      for (int64_t c = 1; c < classes; ++c) {
        if (converted.ElementAsDouble(r * classes + c) > converted.ElementAsDouble(r * classes + a)) a = c;
        if (original.ElementAsDouble(r * classes + c) > original.ElementAsDouble(r * classes + b)) b = c;
      }
      d.top1_kept += a == b;
    }
  }
  return d;
}

}  // namespace

absl::StatusOr<std::vector<OutputDifference>> CompareModels(const std::string& original_path,
                                                            const std::string& converted_path,
                                                            const VerifyOptions& options) {
  auto original = Load(original_path, options.fixed_dims);
  if (!original.ok()) return original.status();
  auto converted = Load(converted_path, {});
  if (!converted.ok()) return converted.status();
  auto feeds = cli::AddRandomInputs((*original)->inputs(), options.feeds, options.dims, options.seed,
                                    options.unknown_dim);
  if (!feeds.ok()) return feeds.status();
  auto want = (*original)->Run(*feeds);
  if (!want.ok()) return absl::Status(want.status().code(), "the original model: " + std::string(want.status().message()));
  auto got = (*converted)->Run(*feeds);
  if (!got.ok()) return absl::Status(got.status().code(), "the converted model: " + std::string(got.status().message()));
  const auto& names = (*original)->graph().outputs;
  if (got->size() != want->size())
    return absl::InternalError("the converted model has " + std::to_string(got->size()) + " outputs, the original " +
                               std::to_string(want->size()));
  std::vector<OutputDifference> diffs;
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor &a = (*got)[i], &b = (*want)[i];
    if (!a.is_tensor() || !b.is_tensor()) continue;  // sequences/optionals: not compared
    if (a.dtype() != b.dtype() || a.dims() != b.dims())
      return absl::InternalError("output '" + names[i].name + "' is " + DataTypeName(a.dtype()) +
                                 DimsToString(a.dims()) + " after conversion, " + DataTypeName(b.dtype()) +
                                 DimsToString(b.dims()) + " before");
    diffs.push_back(Compare(names[i].name, a, b, options));
  }
  return diffs;
}

}  // namespace tandem::convert
