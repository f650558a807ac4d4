#include "framework/plugin/plugin_search.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace tandem {
namespace {

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

}  // namespace

OpenedPlugin OpenPlugin(const std::string& file, int flags, const std::string& what) {
  OpenedPlugin out;
  std::string first_error;
  for (const std::string& path : Candidates(file)) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare && access(path.c_str(), F_OK) != 0) continue;
    out.handle = dlopen(path.c_str(), flags);
    if (out.handle) {
      out.path = path;
      return out;
    }
    const char* err = dlerror();
    // A plugin that exists but cannot load (missing CUDA or MPI libraries) is the reason to give.
    if (first_error.empty() || !bare) first_error = err ? err : "dlopen failed";
  }
  out.why = first_error.find("cannot open shared object file") != std::string::npos &&
                    first_error.find(file) != std::string::npos
                ? file + " was not found (built without " + what + "?)"
                : first_error;
  return out;
}

}  // namespace tandem
