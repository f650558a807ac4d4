// Runs ONNX backend-test folders: <test>/model.onnx with <test>/test_data_set_*/
// input_*.pb and output_*.pb (TensorProto). Outputs are compared like the ONNX suite
// does (numpy assert_allclose: |got - want| <= atol + rtol * |want|; NaN matches NaN;
// exact for integers, bool and strings).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tandem {

struct BackendTestOptions {
  double rtol = 1e-3;
  double atol = 1e-7;
  int num_threads = 0;
  std::vector<std::string> providers = {"cpu"};  // the session's providers, preferred first
};

struct BackendTestResult {
  std::string name;     // folder name, e.g. test_abs
  std::string path;
  enum Outcome { kPass, kFail, kSkip } outcome = kFail;
  std::string reason;   // why it failed or was skipped
  double millis = 0;
  std::map<std::string, int> nodes_per_provider;  // where the model's nodes ran
};

// Expands PATHs: a folder holding model.onnx is one test; any other folder contributes
// each sub-folder that holds one (sorted by name).
std::vector<std::string> FindBackendTests(const std::vector<std::string>& paths);
BackendTestResult RunBackendTest(const std::string& dir, const BackendTestOptions& options);

// "name<TAB or spaces>reason" lines; '#' starts a comment.
std::map<std::string, std::string> ReadExpectedFailures(const std::string& file,
                                                        absl::Status* status);

}  // namespace tandem
