// The entry point a provider plugin (libtandem_<name>.so, e.g. libtandem_cuda.so) exports
// so the engine can load it at run time with dlopen. The plugin is built from the same
// tree and statically links its own copy of graph/ and providers/ (hidden), so the
// classes it hands over (ExecutionProvider, Tensor, KernelRegistry) must have the same
// layout on both sides: the engine checks abi_version and the size fingerprint below and
// refuses a plugin built from another version.
#pragma once
#include <cstddef>

#include "framework/execution_provider.h"
#include "framework/plugin/provider_options.h"
#include "graph/resource_limits.h"

// Bump when any class that crosses the plugin boundary changes.
#define TANDEM_PROVIDER_PLUGIN_ABI 7

extern "C" {

struct TandemProviderPlugin {
  int abi_version;            // TANDEM_PROVIDER_PLUGIN_ABI of the plugin's build
  size_t layout_fingerprint;  // TandemPluginLayoutFingerprint() of the plugin's build
  const char* name;           // the provider's name, e.g. "cuda"
  // Number of usable devices; 0 with a one-line reason in `why` (e.g. "no CUDA-capable
  // device is detected", "driver too old").
  int (*device_count)(char* why, size_t why_size);
  // A new provider on device `index`; null with a reason in `error`. The caller owns it.
  // `limits` are the engine's resource limits (graph/resource_limits.h) at this moment;
  // the plugin applies them to its own copy of graph/ and to device memory. `options`:
  // the session's (framework/plugin/provider_options.h).
  tandem::ExecutionProvider* (*create)(int index, const tandem::ResourceLimits* limits,
                                       const tandem::ProviderOptions* options, char* error, size_t error_size);
  // A provider for placement previews, made without touching a device (no driver call,
  // no context), so it works where no device is: its kernel table, Capability and
  // CopyCostUs answer as a real one's; it makes no kernels and allocates nothing.
  tandem::ExecutionProvider* (*create_preview)(char* error, size_t error_size);
};

// Exported by every plugin under this name.
typedef const TandemProviderPlugin* (*TandemProviderPluginEntry)();
#define TANDEM_PROVIDER_PLUGIN_ENTRY "tandem_provider_plugin"

}  // extern "C"

// Sizes of the types that cross the boundary, folded into one number.
inline size_t TandemPluginLayoutFingerprint() {
  size_t h = 0;
  for (size_t s : {sizeof(tandem::Tensor), sizeof(tandem::Buffer), sizeof(tandem::KernelDef),
                   sizeof(tandem::KernelInfo), sizeof(tandem::KernelContext), sizeof(tandem::Node),
                   sizeof(tandem::Attribute), sizeof(tandem::Graph), sizeof(tandem::ValueInfo),
                   sizeof(tandem::ResourceLimits), sizeof(tandem::ProviderOptions)})
    h = h * 1000003u + s;
  return h;
}
