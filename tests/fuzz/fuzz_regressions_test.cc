// Every input a fuzz target ever crashed on (tests/fuzz/regressions/<target>/<file>) is
// re-run through the same entry point in the ordinary test build: it must return.
#include <dirent.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/resource_limits.h"
#include "onnx_import/import.h"
#include "tests/fuzz/fuzz_entries.h"

namespace tandem::fuzz {
namespace {

std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

// Restores the process-wide limits the entries change.
class FuzzRegressions : public ::testing::Test {
 protected:
  void SetUp() override { SetFuzzLimits(); }
  void TearDown() override { SetResourceLimits(saved_); }
  ResourceLimits saved_ = GetResourceLimits();
};

TEST_F(FuzzRegressions, EveryRecordedCrashNowReturns) {
  const std::string root = std::string(TANDEM_SOURCE_DIR) + "/tests/fuzz/regressions";
  int inputs = 0;
  for (const std::string& target : List(root)) {
    Entry entry = EntryFor(target);
    ASSERT_NE(entry, nullptr) << "regressions for unknown fuzz target '" << target << "'";
    for (const std::string& name : List(root + "/" + target)) {
      std::ifstream in(root + "/" + target + "/" + name, std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      const std::string data = bytes.str();
      SCOPED_TRACE(target + "/" + name);
      entry(reinterpret_cast<const uint8_t*>(data.data()), data.size());
      // Model inputs also go through a default import: libonnx's checker and shape
      // inference (in their child process) must turn the crashes it had into errors.
      if (target == "import" || target == "run")
        ImportModelBuffer(data.data(), data.size(), "", name).IgnoreError();
      ++inputs;
    }
  }
  EXPECT_GT(inputs, 0) << "no regression inputs under " << root;
  std::printf("re-ran %d recorded fuzz crash inputs\n", inputs);
}

}  // namespace
}  // namespace tandem::fuzz
