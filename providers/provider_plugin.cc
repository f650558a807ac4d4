#include "providers/provider_plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "providers/plugin_abi.h"

namespace tandem {
namespace {

struct LoadedPlugin {
  PluginProbe probe;
  const TandemProviderPlugin* api = nullptr;
};

// "" for a path without a folder.
std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string ExecutableDir() {
  std::vector<char> buf(4096);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) return "";
  return DirName(std::string(buf.data(), static_cast<size_t>(n)));
}

// The directory of the binary holding this code: libtandem.so when embedded through the
// C API (the plugin is installed next to it), else the executable.
std::string OwnDir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDir), &info) == 0 || !info.dli_fname) return "";
  return DirName(info.dli_fname);
}

std::vector<std::string> Candidates(const std::string& file) {
  std::vector<std::string> out;
  if (const char* dir = std::getenv("TANDEM_PLUGIN_PATH"); dir && *dir)
    out.push_back(std::string(dir) + "/" + file);
  const std::string exe = ExecutableDir();
  if (const std::string own = OwnDir(); !own.empty() && own != exe) out.push_back(own + "/" + file);
  if (!exe.empty()) {
    out.push_back(exe + "/" + file);
    out.push_back(exe + "/../" + file);
    out.push_back(exe + "/../lib/" + file);
  }
  out.push_back(file);  // the dynamic linker's search path
  return out;
}

LoadedPlugin Load(const std::string& name) {
  LoadedPlugin lp;
  // The name becomes part of a file name: letters, digits and '_' only (no paths).
  bool valid = !name.empty();
  for (char c : name) valid &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  if (!valid) {
    lp.probe.why = "'" + name + "' is not a provider name (letters, digits and '_' only)";
    return lp;
  }
  const std::string file = "libtandem_" + name + ".so";
  void* handle = nullptr;
  std::string first_error;
  for (const std::string& path : Candidates(file)) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && access(path.c_str(), F_OK) != 0) continue;
    // Never closed: providers and their kernels live as long as the process may use them.
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      lp.probe.path = path;
      break;
    }
    const char* err = dlerror();
    // A plugin that exists but cannot load (missing CUDA libraries) is the reason to give.
    if (first_error.empty() || !bare) first_error = err ? err : "dlopen failed";
  }
  if (!handle) {
    lp.probe.why = first_error.find("cannot open shared object file") != std::string::npos &&
                           first_error.find(file) != std::string::npos
                       ? file + " was not found (built without the " + name + " provider?)"
                       : first_error;
    return lp;
  }
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
  if (index < 0 || index >= lp.probe.devices)
    return absl::InvalidArgumentError("provider '" + name + "': device " + std::to_string(index) +
                                      " does not exist (" + std::to_string(lp.probe.devices) +
                                      " visible)");
  char error[512] = {0};
  const ResourceLimits limits = GetResourceLimits();
  ExecutionProvider* p = lp.api->create(index, &limits, &options, error, sizeof error);
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
