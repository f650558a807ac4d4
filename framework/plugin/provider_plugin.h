// Run-time loading of provider plugins (libtandem_<name>.so). The engine never links a
// device library: it dlopens the plugin on first use, asks it how many devices it sees
// and creates providers through it. Without the plugin or without a device, the CPU runs
// everything; FallbackNotice() says why in one line.
//
// Where the plugin is looked for: framework/plugin/plugin_search.h.
#pragma once
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "framework/plugin/provider_options.h"

namespace tandem {

struct PluginProbe {
  bool loaded = false;   // the library was found and is of this build's ABI
  int devices = 0;       // usable devices it reports
  std::string path;      // where it was loaded from
  std::string why;       // when !loaded or devices == 0: one line saying why
};

// Loads (once per process, thread-safe) and probes the plugin of provider `name`.
const PluginProbe& ProbeProviderPlugin(const std::string& name);

// A preview provider from the plugin (plugin_abi.h's create_preview): needs the plugin to
// load, not a device.
absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreatePluginPreview(const std::string& name);

// A provider from the plugin on device `index`, computing as `options` say; an error
// naming the reason otherwise. kProcessDevice: this process's device, which is device 0,
// or in data-parallel training the rank's local rank modulo the devices it sees (one GPU
// per rank on a host). options.communicator, when null, becomes ProcessCommunicator().
constexpr int kProcessDevice = -1;
absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreatePluginProvider(const std::string& name,
                                                                        const ProviderOptions& options = {},
                                                                        int index = kProcessDevice);

}  // namespace tandem
