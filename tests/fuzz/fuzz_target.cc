// One libFuzzer binary per entry of fuzz_entries.h; TANDEM_FUZZ_ENTRY names the function
// (set per target by tests/fuzz/CMakeLists.txt).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tandem::fuzz::SetFuzzLimits();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tandem::fuzz::TANDEM_FUZZ_ENTRY(data, size);
  return 0;
}
