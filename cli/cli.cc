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
  limits.max_loop_iterations =
      a.get_int("--max-loop-iterations", static_cast<long>(limits.max_loop_iterations), 1);
  SetResourceLimits(limits);
}

}  // namespace

Args Parse(int argc, char** argv, const std::vector<std::string>& value_flags,
           const std::vector<std::string>& bool_flags, const char* usage) {
  auto a = ParseArgs(argc, argv, value_flags, bool_flags);
  if (a.ok() && a->help) {
    std::fputs(usage, stdout);
    std::exit(0);
  }
  if (!a.ok()) {
    std::fprintf(stderr, "error: %s\n\n%s", std::string(a.status().message()).c_str(), usage);
    std::exit(2);
  }
  ApplyLimitFlags(*a);
  return *std::move(a);
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
