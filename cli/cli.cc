#include "cli/cli.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "graph/resource_limits.h"
#include "placement/device_selection.h"
#include "runtime/session.h"

namespace tandem::cli {
namespace {

const std::vector<std::string> kLimitFlags = {"--max-memory", "--max-loop-iterations"};

void ApplyLimitFlags(const Args& a) {
  ResourceLimits limits = GetResourceLimits();
  if (a.has("--max-memory")) {
    auto bytes = ParseByteSize(a.get("--max-memory"));
    if (!bytes.ok()) {
      std::fprintf(stderr, "error: --max-memory: %s\n", std::string(bytes.status().message()).c_str());
      std::exit(2);
    }
    limits.max_memory_bytes = *bytes;
  }
  const long iterations = a.get_int("--max-loop-iterations", static_cast<long>(limits.max_loop_iterations));
  if (iterations < 1) {
    std::fprintf(stderr, "error: --max-loop-iterations must be at least 1\n");
    std::exit(2);
  }
  limits.max_loop_iterations = iterations;
  SetResourceLimits(limits);
}

}  // namespace

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

long Args::get_int(const std::string& flag, long fallback) const {
  if (!has(flag)) return fallback;
  std::string v = get(flag);
  char* end = nullptr;
  long r = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end) {
    std::fprintf(stderr, "error: %s expects an integer, got '%s'\n", flag.c_str(), v.c_str());
    std::exit(2);
  }
  return r;
}

double Args::get_double(const std::string& flag, double fallback) const {
  if (!has(flag)) return fallback;
  std::string v = get(flag);
  char* end = nullptr;
  double r = std::strtod(v.c_str(), &end);
  if (v.empty() || *end) {
    std::fprintf(stderr, "error: %s expects a number, got '%s'\n", flag.c_str(), v.c_str());
    std::exit(2);
  }
  return r;
}

Args Parse(int argc, char** argv, const std::vector<std::string>& value_flags,
           const std::vector<std::string>& bool_flags, const char* usage) {
  Args a;
  auto is = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage, stdout);
      std::exit(0);
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
    } else if (is(value_flags, arg) || is(kLimitFlags, arg)) {
      if (!has_value) {
        if (i + 1 >= argc) {
          std::fprintf(stderr, "error: %s needs a value\n\n%s", arg.c_str(), usage);
          std::exit(2);
        }
        value = argv[++i];
      }
      a.flags.emplace(arg, value);
    } else {
      std::fprintf(stderr, "error: unknown option %s\n\n%s", arg.c_str(), usage);
      std::exit(2);
    }
  }
  ApplyLimitFlags(a);
  return a;
}

DeviceChoice DeviceFromFlags(const Args& a, const std::string& fallback) {
  const std::string device = a.get("--device", a.get("--provider", fallback));
  auto choice = ResolveDevice(device);
  if (!choice.ok()) {
    std::fprintf(stderr, "error: --device: %s\n", std::string(choice.status().message()).c_str());
    std::exit(2);
  }
  PrintDeviceNoticeOnce(*choice);
  return *choice;
}

ProviderOptions ProviderOptionsFromFlags(const Args& a) {
  ProviderOptions o;
  const std::string precision = a.get("--precision", "fp32");
  if (precision == "tf32") {
    o.precision = Precision::kTf32;
  } else if (precision != "fp32") {
    std::fprintf(stderr, "error: --precision must be fp32 or tf32, got '%s'\n", precision.c_str());
    std::exit(2);
  }
  return o;
}

void PrintDeviceGraphStatus(const Session& session, int64_t runs) {
  bool on_device = false;
  for (const ExecutionProvider* p : session.providers()) on_device |= p->device().type != DeviceType::kCpu;
  const std::string status = session.device_graph_status();
  if (!on_device || status == "device graphs are off") return;
  if (status.empty())
    std::printf("CUDA graph: %lld of %lld runs replayed\n", static_cast<long long>(session.device_graph_replays()),
                static_cast<long long>(runs));
  else
    std::printf("CUDA graph: off (%s)\n", status.c_str());
}

void PrintPlacementChoice(const PartitionResult& placement) {
  if (placement.candidates.size() < 2) return;
  std::string others;
  for (const auto& [name, us] : placement.candidates)
    if (name != placement.plan) others += absl::StrFormat("%s%s %.4g us", others.empty() ? "" : ", ", name, us);
  std::printf("placement: %s, estimated %.4g us per run (%s)\n", placement.plan.c_str(), placement.estimated_us,
              others.c_str());
}

void PrintProfile(std::vector<StepProfile> steps) {
  double total = 0;
  for (const StepProfile& p : steps) total += p.total_us;
  std::sort(steps.begin(), steps.end(),
            [](const StepProfile& a, const StepProfile& b) { return a.total_us > b.total_us; });
  std::printf("%-32s %-20s %-6s %10s %7s\n", "node", "op", "on", "us/call", "share");
  for (const StepProfile& p : steps) {
    if (!p.calls) continue;
    std::printf("%-32.32s %-20s %-6s %10.1f %6.1f%%\n", p.node.c_str(), p.op.c_str(),
                p.provider.c_str(), p.total_us / p.calls, total > 0 ? 100 * p.total_us / total : 0);
  }
}

}  // namespace tandem::cli
