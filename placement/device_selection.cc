#include "placement/device_selection.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "framework/communicator.h"
#include "framework/plugin/provider_plugin.h"

namespace tandem {

const std::vector<std::string>& AcceleratorNames() {
  static const std::vector<std::string> names = {"cuda"};
  return names;
}

absl::StatusOr<DeviceChoice> ResolveDevice(const std::string& device) {
  DeviceChoice c;
  c.providers = {"cpu"};
  c.device = "cpu";
  if (device == "cpu") return c;
  const auto& accel = AcceleratorNames();
  const bool named = std::find(accel.begin(), accel.end(), device) != accel.end();
  if (!named && device != "auto") {
    std::string known = "cpu, auto";
    for (const std::string& a : accel) known += ", " + a;
    return absl::InvalidArgumentError("unknown device '" + device + "' (known: " + known + ")");
  }
  std::string why;
  for (const std::string& name : accel) {
    if (named && name != device) continue;
    const PluginProbe& probe = ProbeProviderPlugin(name);
    if (probe.loaded && probe.devices > 0) {
      c.providers = {name, "cpu"};
      c.device = name;
      if (!named) c.placement = PartitionOptions::Policy::kLowestCost;
      return c;
    }
    why += (why.empty() ? "" : "; ") + probe.why;
  }
  if (GpuRequired())
    return absl::FailedPreconditionError("TANDEM_REQUIRE_GPU=1 and " + (named ? device : std::string("no accelerator")) +
                                         (named ? " is not available: " : " is available: ") + why);
  c.notice = "[tandem] " + (named ? device : std::string("no accelerator")) +
             (named ? " is not available: " : ": ") + why + " - running everything on the CPU";
  return c;
}

bool GpuRequired() {
  const char* v = std::getenv("TANDEM_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

void PrintDeviceNoticeOnce(const DeviceChoice& choice) {
  static std::atomic<bool> printed{false};
  if (choice.notice.empty() || printed.exchange(true)) return;
  if (const Communicator* c = ProcessCommunicator(); c && c->rank() != 0) return;  // every rank would say it
  std::fprintf(stderr, "%s\n", choice.notice.c_str());
}

}  // namespace tandem
