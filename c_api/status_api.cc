// Statuses, version, environment and the helpers shared by every entry point.
#include <cstdlib>

#include "c_api/handles.h"
#include "framework/plugin/provider_plugin.h"
#include "placement/device_selection.h"

namespace tandem::capi {

TandemStatus* MakeStatus(TandemCode code, std::string message) {
  auto* s = new TandemStatus;
  s->code = code;
  s->message = std::move(message);
  return s;
}

TandemStatus* FromStatus(const absl::Status& s) {
  if (s.ok()) return nullptr;
  TandemCode code = TANDEM_INTERNAL;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange: code = TANDEM_INVALID_ARGUMENT; break;
    case absl::StatusCode::kNotFound: code = TANDEM_NOT_FOUND; break;
    case absl::StatusCode::kFailedPrecondition: code = TANDEM_FAILED_PRECONDITION; break;
    case absl::StatusCode::kResourceExhausted: code = TANDEM_RESOURCE_EXHAUSTED; break;
    case absl::StatusCode::kUnavailable: code = TANDEM_UNAVAILABLE; break;
    case absl::StatusCode::kUnimplemented: code = TANDEM_UNIMPLEMENTED; break;
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kDataLoss: code = TANDEM_IO_ERROR; break;
    default: break;
  }
  return MakeStatus(code, std::string(s.message()));
}

TandemStatus* OutOfMemoryStatus() {
  static TandemStatus oom{TANDEM_RESOURCE_EXHAUSTED, "[c_api] out of memory", /*static_storage=*/true};
  return &oom;
}

TandemStatus* NullArgument(const char* function, const char* name) {
  return MakeStatus(TANDEM_INVALID_ARGUMENT,
                    std::string("[c_api] ") + function + ": argument '" + name + "' is NULL");
}

TandemStatus* BusyStatus(const char* function, const char* what) {
  return MakeStatus(TANDEM_BUSY, std::string("[c_api] ") + function + ": the " + what +
                                     " is in use by another thread (it is not thread-safe)");
}

std::vector<std::string> ProvidersForDevice(const std::string& device) {
  if (device == "auto") {
    auto choice = ResolveDevice("auto");
    if (choice.ok()) return choice->providers;
    return {AcceleratorNames().front(), "cpu"};  // TANDEM_REQUIRE_GPU=1: creating it fails, saying why
  }
  if (device == "cpu") return {"cpu"};
  return {device, "cpu"};
}

}  // namespace tandem::capi

using tandem::capi::Guard;

extern "C" {

TandemCode tandem_status_code(const TandemStatus* status) { return status ? status->code : TANDEM_OK; }
const char* tandem_status_message(const TandemStatus* status) {
  return status ? status->message.c_str() : "";
}
void tandem_status_release(TandemStatus* status) {
  if (status && !status->static_storage) delete status;
}
void tandem_free(void* p) { std::free(p); }

const char* tandem_version(void) { return TANDEM_VERSION_STRING; }
uint32_t tandem_api_version(void) { return TANDEM_API_VERSION; }

TandemStatus* tandem_env_create(uint32_t api_version, TandemEnv** out) {
  return Guard("tandem_env_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_env_create", out);
    if (api_version > TANDEM_API_VERSION || api_version == 0)
      return tandem::capi::MakeStatus(
          TANDEM_UNIMPLEMENTED, "[c_api] tandem_env_create: the client was built for API version " +
                                    std::to_string(api_version) + ", this library (" +
                                    TANDEM_VERSION_STRING + ") implements 1.." +
                                    std::to_string(TANDEM_API_VERSION));
    *out = new TandemEnv;
    return nullptr;
  });
}

void tandem_env_release(TandemEnv* env) { delete env; }

TandemStatus* tandem_env_provider_available(TandemEnv* env, const char* name, int* available,
                                            const char** why) {
  return Guard("tandem_env_provider_available", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_env_provider_available", env);
    TANDEM_CAPI_NOT_NULL("tandem_env_provider_available", name);
    TANDEM_CAPI_NOT_NULL("tandem_env_provider_available", available);
    std::string reason;
    bool ok = std::string(name) == "cpu";
    if (!ok) {
      const tandem::PluginProbe& probe = tandem::ProbeProviderPlugin(name);
      ok = probe.loaded && probe.devices > 0;
      reason = probe.why;
    }
    *available = ok ? 1 : 0;
    if (why) {
      std::lock_guard<std::mutex> lock(env->mu);
      std::string& kept = env->unavailable_reasons[name];
      if (kept != reason) kept = reason;
      *why = kept.c_str();
    }
    return nullptr;
  });
}

}  // extern "C"
