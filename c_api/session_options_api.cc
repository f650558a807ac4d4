// Session options: providers, threads, optimisation level, profiling, output placement.
#include "c_api/handles.h"

using namespace tandem::capi;

extern "C" {

TandemStatus* tandem_session_options_create(TandemSessionOptions** out) {
  return Guard("tandem_session_options_create", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_options_create", out);
    *out = new TandemSessionOptions;
    return nullptr;
  });
}

void tandem_session_options_release(TandemSessionOptions* options) { delete options; }

TandemStatus* tandem_session_options_set_providers(TandemSessionOptions* options,
                                                   const char* const* names, size_t count) {
  return Guard("tandem_session_options_set_providers", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_options_set_providers", options);
    TANDEM_CAPI_NOT_NULL("tandem_session_options_set_providers", names);
    if (count == 0)
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        "[c_api] tandem_session_options_set_providers: no provider given");
    std::vector<std::string> list;
    for (size_t i = 0; i < count; ++i) {
      if (names[i] == nullptr || !*names[i])
        return MakeStatus(TANDEM_INVALID_ARGUMENT,
                          "[c_api] tandem_session_options_set_providers: name " +
                              std::to_string(i) + " is NULL or empty");
      list.push_back(names[i]);
    }
    if (count == 1 && list[0] == "auto") list = ProvidersForDevice("auto");
    options->options.providers = std::move(list);
    return nullptr;
  });
}

TandemStatus* tandem_session_options_set_threads(TandemSessionOptions* options, int threads) {
  return Guard("tandem_session_options_set_threads", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_options_set_threads", options);
    if (threads < 0)
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        "[c_api] tandem_session_options_set_threads: threads must be >= 0, got " +
                            std::to_string(threads));
    options->options.num_threads = threads;
    return nullptr;
  });
}

TandemStatus* tandem_session_options_set_optimization_level(TandemSessionOptions* options,
                                                            int level) {
  return Guard("tandem_session_options_set_optimization_level", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_options_set_optimization_level", options);
    if (level < 0 || level > 2)
      return MakeStatus(TANDEM_INVALID_ARGUMENT,
                        "[c_api] tandem_session_options_set_optimization_level: level must be 0, 1 "
                        "or 2, got " + std::to_string(level));
    options->options.constant_folding = level >= 1;
    options->options.fusion = level >= 2;
    return nullptr;
  });
}

TandemStatus* tandem_session_options_set_profiling(TandemSessionOptions* options, int enabled) {
  return Guard("tandem_session_options_set_profiling", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_options_set_profiling", options);
    options->options.profiling = enabled != 0;
    return nullptr;
  });
}

TandemStatus* tandem_session_options_set_outputs_on_device(TandemSessionOptions* options,
                                                           int enabled) {
  return Guard("tandem_session_options_set_outputs_on_device", [&]() -> TandemStatus* {
    TANDEM_CAPI_NOT_NULL("tandem_session_options_set_outputs_on_device", options);
    options->options.outputs_on_host = enabled == 0;
    return nullptr;
  });
}

}  // extern "C"
