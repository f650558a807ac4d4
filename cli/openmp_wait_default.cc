#include "cli/openmp_wait_default.h"

#include <unistd.h>

#include "runtime/openmp_wait.h"

namespace tandem::cli {

void ReexecWithDefaultOpenMpWait(char** argv) {
  if (SetDefaultOpenMpWait()) execv("/proc/self/exe", argv);  // returns only on failure
}

}  // namespace tandem::cli
