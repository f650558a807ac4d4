// Sets an environment variable for a scope and restores what it was (or unsets it) after:
// tests force a code path the way a user would, e.g. TANDEM_CPU_CONV_LAYOUT.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>

namespace tandem::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace tandem::testing
