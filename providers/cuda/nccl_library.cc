#include "providers/cuda/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace tandem::cuda {
namespace {

template <typename F>
bool Resolve(void* handle, const char* name, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (!*out && missing->empty()) *missing = name;
  return *out != nullptr;
}

}  // namespace

absl::StatusOr<NcclLibrary> OpenNccl(const std::string& path) {
  NcclLibrary lib;
  lib.path = path;
  void* handle = dlopen(lib.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return absl::UnavailableError("NCCL is needed to sum gradients across GPUs and cannot be opened (" +
                                  std::string(why ? why : lib.path) +
                                  "); install NCCL 2 or point TANDEM_NCCL_LIBRARY at libnccl.so.2");
  }
  std::string missing;
  decltype(&ncclGetVersion) get_version = nullptr;
  Resolve(handle, "ncclGetVersion", &get_version, &missing);
  Resolve(handle, "ncclGetUniqueId", &lib.get_unique_id, &missing);
  Resolve(handle, "ncclCommInitRank", &lib.comm_init_rank, &missing);
  Resolve(handle, "ncclAllReduce", &lib.all_reduce, &missing);
  Resolve(handle, "ncclCommGetAsyncError", &lib.async_error, &missing);
  Resolve(handle, "ncclCommAbort", &lib.comm_abort, &missing);
  Resolve(handle, "ncclGetErrorString", &lib.error_string, &missing);
  Resolve(handle, "ncclGetLastError", &lib.last_error, &missing);
  if (!missing.empty()) {
    dlclose(handle);
    return absl::UnavailableError(lib.path + " lacks " + missing + " (NCCL 2.13 or later is needed)");
  }
  if (get_version(&lib.version) != ncclSuccess || lib.version / 10000 != 2) {
    dlclose(handle);
    return absl::UnavailableError(lib.path + " is not NCCL 2 (version code " + std::to_string(lib.version) + ")");
  }
  return lib;  // the handle stays open: the process uses NCCL until it ends
}

std::string NcclLibrary::description() const {
  return "NCCL " + std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

absl::Status NcclLibrary::Check(ncclResult_t result, const char* what, ncclComm_t comm) const {
  if (result == ncclSuccess) return absl::OkStatus();
  std::string msg = std::string(what) + ": " + error_string(result);
  const char* last = last_error(comm);
  if (last && *last) msg += std::string(" (") + last + ")";
  return absl::InternalError(msg);
}

absl::StatusOr<const NcclLibrary*> LoadNccl() {
  static const absl::StatusOr<NcclLibrary>* opened = [] {
    const char* given = std::getenv("TANDEM_NCCL_LIBRARY");
    return new absl::StatusOr<NcclLibrary>(OpenNccl(given && *given ? given : "libnccl.so.2"));
  }();
  if (!opened->ok()) return opened->status();
  return &**opened;
}

}  // namespace tandem::cuda
