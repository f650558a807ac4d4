// Test scratch that outlives no test process: paths (files or folders, with everything in
// them) handed to a RemoveAtExit are deleted when it is destroyed, which for a function-
// local static is at a normal exit. A crash keeps them (a fuzzer's crashing input, say).
#pragma once
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <system_error>

namespace tandem::testing {

class RemoveAtExit {
 public:
  ~RemoveAtExit() {
    for (const std::string& path : paths_) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  }
  void Add(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    paths_.insert(path);
  }

 private:
  std::mutex mu_;
  std::set<std::string> paths_;
};

}  // namespace tandem::testing
