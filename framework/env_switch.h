// On/off switches: environment variables that turn one optimization off when set to "0"
// (the CPU provider's TANDEM_CPU_FUSED_ATTENTION, TANDEM_CPU_ADD_LAYER_NORM,
// TANDEM_CPU_CONV_INPUT_SCALE, TANDEM_CPU_OWN_SWISH, TANDEM_CPU_HUGE_PAGES, the attention
// fusion's TANDEM_ATTENTION_HEADS_IN_PLACE, training's TANDEM_LINEAR_GEMM, and the session's
// TANDEM_ADAPTIVE_THREADS), to compare with it or to rule it out.
#pragma once
#include <cstdlib>
#include <cstring>

namespace tandem {

// Whether the environment variable `name` is set to exactly "0".
inline bool SwitchedOff(const char* name) {
  const char* value = std::getenv(name);
  return value && std::strcmp(value, "0") == 0;
}

}  // namespace tandem
