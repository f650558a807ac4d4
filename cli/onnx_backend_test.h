// Runs ONNX backend-test folders: <test>/model.onnx with <test>/test_data_set_*/
// input_*.pb and output_*.pb (TensorProto). Integers, bool, strings and the narrow float
// types must match exactly; NaN matches NaN and infinities must match. Other float
// outputs are judged one of three ways (BackendTestOptions).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tandem {

struct BackendTestOptions {
  // Element-wise, as the ONNX suite does (numpy assert_allclose), the default: every
  // element within |got - want| <= atol + rtol * |want|.
  double rtol = 1e-3;
  double atol = 1e-7;
  // At the output's scale, when > 0: max |got - want| <= scale_tol * max |want|, per
  // output. For float32 engines against each other: a sum's rounding error follows the
  // size of its terms, not of its result, so an output element near zero carries the
  // noise of the largest ones, which an element-wise atol judges as a failure on a CPU
  // whose kernels round differently.
  double scale_tol = 0;
  // Against a peer engine, when > 0 and a data set holds peer_output_<i>.pb (another
  // engine's float32 answer to the same input, where output_<i>.pb is the exact, float64
  // answer): max |got - want| <= peer_ratio * max(max |peer - want|, 2^-23 max |want|),
  // i.e. Tandem's error at most peer_ratio times the peer's (the floor, one float32 ulp
  // of the scale, keeps a peer that happens to be exact from demanding exactness).
  // Outputs without a peer file are judged by scale_tol or element-wise.
  double peer_ratio = 0;
  int num_threads = 0;
  std::vector<std::string> providers = {"cpu"};  // the session's providers, preferred first
};

struct BackendTestResult {
  std::string name;     // folder name, e.g. test_abs
  std::string path;
  enum Outcome { kPass, kFail, kSkip } outcome = kFail;
  std::string reason;   // why it failed or was skipped
  std::string measured; // passed by scale or peer: each output's error, e.g. "y 3.1e-07 of scale"
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
