// NCCL, loaded at run time the first time a data-parallel run sums gradients on the GPU,
// so the CUDA plugin still loads where NCCL is not installed. nccl.h gives the types; the
// library is dlopen'ed from $TANDEM_NCCL_LIBRARY when set, else as libnccl.so.2 through
// the dynamic linker (CUDA's lib folder, pip's nvidia/nccl/lib via LD_LIBRARY_PATH).
// Only the calls Tandem makes are resolved.
#pragma once
#include <nccl.h>

#include <string>

#include "absl/status/statusor.h"

namespace tandem::cuda {

struct NcclLibrary {
  std::string path;  // what was opened
  int version = 0;   // ncclGetVersion's code, e.g. 22809 for 2.28.9
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclCommGetAsyncError) async_error = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;

  // "NCCL 2.28.9".
  std::string description() const;
  // OK for ncclSuccess; otherwise `what` with NCCL's name of the result and its last error.
  absl::Status Check(ncclResult_t result, const char* what, ncclComm_t comm = nullptr) const;
};

// Opens NCCL from `path` (a file, or a name the dynamic linker looks up); an error saying
// what is missing (the file, a symbol, a major version other than 2) otherwise.
absl::StatusOr<NcclLibrary> OpenNccl(const std::string& path);
// OpenNccl($TANDEM_NCCL_LIBRARY or "libnccl.so.2"), once per process (thread-safe); its
// error, every time, when that failed.
absl::StatusOr<const NcclLibrary*> LoadNccl();

}  // namespace tandem::cuda
