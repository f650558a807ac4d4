#include "providers/cpu/cpu_isa.h"

#include <cstdlib>
#include <string>

#include "absl/strings/ascii.h"

namespace tandem::cpu {

namespace {

// The cap oneDNN reads; empty when unset.
std::string_view IsaCap() {
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return "";
}

}  // namespace

bool CapAdmitsAvx2(std::string_view cap) {
  const std::string upper = absl::AsciiStrToUpper(std::string(cap));
  return upper != "SSE41" && upper != "AVX";
}

bool Avx2Allowed() {
  static const bool allowed = [] {
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return false;
    return CapAdmitsAvx2(IsaCap());
#else
    return false;
#endif
  }();
  return allowed;
}

bool CapAdmitsAvx512(std::string_view cap) {
  const std::string upper = absl::AsciiStrToUpper(std::string(cap));
  return upper.empty() || upper == "ALL" || upper.rfind("AVX512", 0) == 0 || upper.rfind("AVX10", 0) == 0;
}

bool Avx512Allowed() {
  static const bool allowed = [] {
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma")) return false;
    return CapAdmitsAvx512(IsaCap());
#else
    return false;
#endif
  }();
  return allowed;
}

}  // namespace tandem::cpu
