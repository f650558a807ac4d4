// Where Tandem's run-time plugins (libtandem_<name>.so: the CUDA provider, the MPI
// communicator) are looked for, and opening one.
//
// Search order: $TANDEM_PLUGIN_PATH (a directory), the directory of libtandem.so when the
// engine is embedded through it, the directory of the running executable and its parent
// (build trees: build/ and build/tests/), its ../lib (installed layouts), then the dynamic
// linker's own search (LD_LIBRARY_PATH, ...).
#pragma once
#include <string>

namespace tandem {

struct OpenedPlugin {
  void* handle = nullptr;  // never closed: what it provides lives as long as the process
  std::string path;        // where it was loaded from
  std::string why;         // without a handle: one line saying why
};

// Opens `file` (e.g. "libtandem_cuda.so") from the first place above that has it, with
// dlopen `flags` (RTLD_NOW | RTLD_LOCAL, or RTLD_GLOBAL for a library whose own
// dependencies load modules that need its symbols, as Open MPI's do). `what` names the
// plugin in the message when it is missing ("the cuda provider").
OpenedPlugin OpenPlugin(const std::string& file, int flags, const std::string& what);

}  // namespace tandem
