#include "cli/lib/args.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tandem::cli {

const std::vector<std::string>& LimitFlags() {
  static const std::vector<std::string> flags = {"--max-memory", "--max-loop-iterations"};
  return flags;
}

std::string Args::get(const std::string& flag, const std::string& fallback) const {
  auto it = flags.find(flag);
  return it == flags.end() ? fallback : it->second;
}

std::vector<std::string> Args::all(const std::string& flag) const {
  std::vector<std::string> out;
  auto range = flags.equal_range(flag);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  return out;
}

long Args::get_int(const std::string& flag, long fallback, long min, long max) const {
  if (!has(flag)) return fallback;
  auto v = ParseInt64(get(flag), min, max);
  if (!v.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", flag.c_str(), std::string(v.status().message()).c_str());
    std::exit(2);
  }
  return static_cast<long>(*v);
}

double Args::get_double(const std::string& flag, double fallback, const DoubleRange& range) const {
  if (!has(flag)) return fallback;
  auto v = ParseFiniteDouble(get(flag), range);
  if (!v.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", flag.c_str(), std::string(v.status().message()).c_str());
    std::exit(2);
  }
  return *v;
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv, const std::vector<std::string>& value_flags,
                               const std::vector<std::string>& bool_flags) {
  Args a;
  auto is = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      a.help = true;
      return a;
    }
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      a.positional.push_back(arg);
      continue;
    }
    std::string value;
    size_t eq = arg.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (is(bool_flags, arg)) {
      a.flags.emplace(arg, has_value ? value : "1");
    } else if (is(value_flags, arg) || is(LimitFlags(), arg)) {
      if (!has_value) {
        if (i + 1 >= argc) return absl::InvalidArgumentError(arg + " needs a value");
        value = argv[++i];
      }
      a.flags.emplace(arg, value);
    } else {
      return absl::InvalidArgumentError("unknown option " + arg);
    }
  }
  return a;
}

}  // namespace tandem::cli
