#include "framework/plugin/provider_plugin.h"

#include <dlfcn.h>

#include <cctype>
#include <map>
#include <mutex>
#include <vector>

#include "framework/communicator.h"
#include "framework/plugin/plugin_abi.h"
#include "framework/plugin/plugin_search.h"

namespace tandem {
namespace {

struct LoadedPlugin {
  PluginProbe probe;
  const TandemProviderPlugin* api = nullptr;
};

LoadedPlugin Load(const std::string& name) {
  LoadedPlugin lp;
  // The name becomes part of a file name: letters, digits and '_' only (no paths).
  bool valid = !name.empty();
  for (char c : name) valid &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (!valid) {
    lp.probe.why = "'" + name + "' is not a provider name (letters, digits and '_' only)";
    return lp;
  }
  OpenedPlugin opened = OpenPlugin("libtandem_" + name + ".so", RTLD_NOW | RTLD_LOCAL, "the " + name + " provider");
  if (!opened.handle) {
    lp.probe.why = opened.why;
    return lp;
  }
  void* handle = opened.handle;
  lp.probe.path = opened.path;
  auto entry = reinterpret_cast<TandemProviderPluginEntry>(dlsym(handle, TANDEM_PROVIDER_PLUGIN_ENTRY));
  if (!entry) {
    lp.probe.why = lp.probe.path + " has no " TANDEM_PROVIDER_PLUGIN_ENTRY " entry point";
    return lp;
  }
  const TandemProviderPlugin* api = entry();
  if (!api || api->abi_version != TANDEM_PROVIDER_PLUGIN_ABI ||
      api->layout_fingerprint != TandemPluginLayoutFingerprint()) {
    lp.probe.why = lp.probe.path + " was built from another version of Tandem (plugin ABI mismatch)";
    return lp;
  }
  lp.api = api;
  lp.probe.loaded = true;
  char why[512] = {0};
  lp.probe.devices = api->device_count(why, sizeof why);
  if (lp.probe.devices <= 0) {
    lp.probe.devices = 0;
    lp.probe.why = why[0] ? why : "no device";
  }
  return lp;
}

LoadedPlugin& Get(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, LoadedPlugin> plugins;
  std::lock_guard<std::mutex> lock(mu);
  auto it = plugins.find(name);
  if (it == plugins.end()) it = plugins.emplace(name, Load(name)).first;
  return it->second;
}

}  // namespace

const PluginProbe& ProbeProviderPlugin(const std::string& name) { return Get(name).probe; }

absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreatePluginProvider(const std::string& name,
                                                                        const ProviderOptions& options,
                                                                        int index) {
  LoadedPlugin& lp = Get(name);
  if (!lp.probe.loaded)
    return absl::UnavailableError("provider '" + name + "' is not available: " + lp.probe.why);
  if (lp.probe.devices == 0)
    return absl::UnavailableError("provider '" + name + "': " + lp.probe.why);
  ProviderOptions given = options;
  if (!given.communicator) given.communicator = ProcessCommunicator();
  if (index == kProcessDevice)
    index = given.communicator ? given.communicator->local_rank() % lp.probe.devices : 0;
  if (index < 0 || index >= lp.probe.devices)
    return absl::InvalidArgumentError("provider '" + name + "': device " + std::to_string(index) +
                                      " does not exist (" + std::to_string(lp.probe.devices) +
                                      " visible)");
  char error[512] = {0};
  const ResourceLimits limits = GetResourceLimits();
  ExecutionProvider* p = lp.api->create(index, &limits, &given, error, sizeof error);
  if (!p) return absl::UnavailableError("provider '" + name + "': " + std::string(error));
  return std::unique_ptr<ExecutionProvider>(p);
}

absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreatePluginPreview(const std::string& name) {
  LoadedPlugin& lp = Get(name);
  if (!lp.probe.loaded)
    return absl::UnavailableError("provider '" + name + "' is not available: " + lp.probe.why);
  char error[512] = {0};
  ExecutionProvider* p = lp.api->create_preview(error, sizeof error);
  if (!p) return absl::UnavailableError("provider '" + name + "' (preview): " + std::string(error));
  return std::unique_ptr<ExecutionProvider>(p);
}

}  // namespace tandem
