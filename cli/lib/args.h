// Argument parsing shared by the `tandem` subcommands: `--flag value`, `--flag=value`,
// boolean `--flag`, repeated flags and positional arguments. Numbers go through
// graph/parse_number.h: the whole value, range-checked, finite.
#pragma once
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/parse_number.h"

namespace tandem::cli {

struct Args {
  std::vector<std::string> positional;
  std::multimap<std::string, std::string> flags;  // "--repeat" -> "10"
  bool help = false;                               // -h or --help was given

  bool has(const std::string& flag) const { return flags.count(flag) != 0; }
  std::string get(const std::string& flag, const std::string& fallback = "") const;
  std::vector<std::string> all(const std::string& flag) const;
  // An integer flag in [min, max], or a finite number in `range` (graph/parse_number.h: the
  // whole value, no NaN or infinity); a malformed or out-of-range value prints an error
  // naming the flag ("error: --batch-size: '0' is below 1") and exits(2). `fallback` is
  // the default when the flag is absent.
  long get_int(const std::string& flag, long fallback, long min = std::numeric_limits<long>::min(),
               long max = std::numeric_limits<long>::max()) const;
  double get_double(const std::string& flag, double fallback, const DoubleRange& range = {}) const;
};

// The flags every command takes: --max-memory and --max-loop-iterations.
const std::vector<std::string>& LimitFlags();

// argv (argv[0] the command) split into flags and positional arguments, printing and
// exiting nothing: an unknown flag, or a value flag without its value, is an error naming
// the flag. `bool_flags` take no value; -h/--help sets `help` and ends the parse there.
absl::StatusOr<Args> ParseArgs(int argc, char** argv, const std::vector<std::string>& value_flags,
                               const std::vector<std::string>& bool_flags);

}  // namespace tandem::cli
