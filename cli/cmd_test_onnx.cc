// tandem test-onnx: the ONNX backend-suite runner.
#include <cstdio>
#include <set>

#include "cli/cli.h"
#include "cli/onnx_backend_test.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem test-onnx [options] PATH...\n"
    "\n"
    "Runs ONNX backend tests. Each PATH is a test folder (model.onnx +\n"
    "test_data_set_*/input_*.pb, output_*.pb) or a folder of such folders.\n"
    "Prints one line per test (PASS/FAIL/SKIP + reason) and a closing\n"
    "'N passed, M failed, K skipped' line. Exit status 1 if any test failed.\n"
    "\n"
    "Float outputs are judged element by element, as the ONNX suite does, unless\n"
    "--scale-tol or --peer-ratio is given; integer, bool, string and float8/4\n"
    "outputs must match exactly, NaN matches NaN, infinities must match.\n"
    "\n"
    "options:\n"
    "  --rtol X                relative tolerance (default 1e-3, as the ONNX suite)\n"
    "  --atol X                absolute tolerance (default 1e-7): each element within\n"
    "                          |got - expected| <= atol + rtol |expected|\n"
    "  --scale-tol X           judge each float output at its scale instead:\n"
    "                          max |got - expected| <= X * max |expected| (float32\n"
    "                          engines' rounding follows the largest values)\n"
    "  --peer-ratio K          where a data set holds peer_output_<i>.pb, another\n"
    "                          engine's float32 answer (output_<i>.pb being the exact\n"
    "                          one): Tandem's max error may be at most K times the\n"
    "                          peer's (or K float32 ulps of the scale, if larger)\n"
    "  --threads N             threads per session (default: all cores)\n"
    "  --expected-failures F   file of 'test_name reason' lines: listed tests are\n"
    "                          expected to fail; the exit status is 0 only if exactly\n"
    "                          those fail (a listed test that passes is an error, so\n"
    "                          the list always tells the truth); a reason starting\n"
    "                          'random output' marks a test of a random draw, which\n"
    "                          may pass or fail\n"
    "  --quiet                 print only failures and the summary\n"
    TANDEM_DEVICE_HELP
    "                          (--provider is the same flag; default cpu here)\n"
    TANDEM_LIMITS_HELP;
}  // namespace

int TestOnnx(int argc, char** argv) {
  Args a = Parse(argc, argv, {"--rtol", "--atol", "--scale-tol", "--peer-ratio", "--threads", "--expected-failures", "--device", "--provider"},
                 {"--quiet"}, kUsage);
  if (a.positional.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  BackendTestOptions o;
  o.rtol = a.get_double("--rtol", o.rtol, DoubleRange{0});
  o.atol = a.get_double("--atol", o.atol, DoubleRange{0});
  o.scale_tol = a.get_double("--scale-tol", 0, DoubleRange{0});
  o.peer_ratio = a.get_double("--peer-ratio", 0, DoubleRange{0});
  if (o.scale_tol < 0 || o.peer_ratio < 0 || o.rtol < 0 || o.atol < 0) {
    std::fprintf(stderr, "error: tandem test-onnx: tolerances must not be negative\n");
    return 2;
  }
  o.num_threads = static_cast<int>(a.get_int("--threads", 0, 0, kMaxThreads));
  o.providers = DeviceFromFlags(a, "cpu").providers;
  std::map<std::string, int> nodes_per_provider;
  std::map<std::string, std::string> expected;
  bool have_expected = a.has("--expected-failures");
  if (have_expected) {
    absl::Status s;
    expected = ReadExpectedFailures(a.get("--expected-failures"), &s);
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
      return 2;
    }
  }
  std::vector<std::string> tests = FindBackendTests(a.positional);
  if (tests.empty()) {
    std::fprintf(stderr, "error: no ONNX test folders found under the given paths\n");
    return 2;
  }
  int passed = 0, failed = 0, skipped = 0, unexpected_fail = 0, unexpected_pass = 0;
  std::set<std::string> seen;
  for (const std::string& dir : tests) {
    BackendTestResult r = RunBackendTest(dir, o);
    seen.insert(r.name);
    for (const auto& [p, n] : r.nodes_per_provider) nodes_per_provider[p] += n;
    bool listed = expected.count(r.name) != 0;
    // A test of a random draw may match the suite's stored draw by chance.
    const bool random = listed && expected[r.name].rfind("random output", 0) == 0;
    const char* tag = "PASS";
    if (r.outcome == BackendTestResult::kPass) {
      ++passed;
      if (listed && !random) {
        ++unexpected_pass;
        tag = "PASS (listed as expected failure: remove it from the list)";
      }
    } else if (r.outcome == BackendTestResult::kSkip) {
      ++skipped;
      tag = "SKIP";
    } else {
      ++failed;
      tag = listed ? "FAIL (expected)" : "FAIL";
      if (!listed) ++unexpected_fail;
    }
    bool show = !a.has("--quiet") || (r.outcome == BackendTestResult::kFail && !listed) ||
                (listed && !random && r.outcome == BackendTestResult::kPass);
    if (show) {
      const std::string& why = r.reason.empty() ? r.measured : r.reason;
      std::printf("%-60s %s%s%s\n", r.name.c_str(), tag, why.empty() ? "" : ": ", why.c_str());
      std::fflush(stdout);
    }
  }
  std::printf("nodes run per provider:");
  for (const auto& [p, n] : nodes_per_provider) std::printf(" %s=%d", p.c_str(), n);
  std::printf("\n%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  if (!have_expected) return failed ? 1 : 0;
  int stale = 0;
  for (const auto& [name, reason] : expected)
    if (!seen.count(name)) ++stale;
  std::printf("expected failures: %zu listed, %d failed unexpectedly, %d passed unexpectedly\n",
              expected.size(), unexpected_fail, unexpected_pass);
  (void)stale;  // entries for tests outside the given paths are fine (partial runs)
  return unexpected_fail || unexpected_pass ? 1 : 0;
}

}  // namespace tandem::cli
