// What Tandem reads from a path is a regular file: a named pipe (FIFO) would block the
// reader forever, a device or a socket would stream without end, a directory reads as
// nothing. Errors name the path and what it is instead ("'w.bin' is a named pipe (FIFO),
// not a regular file").
#pragma once
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tandem {

// OK when `path`, with its links followed, is a regular file (for the files a user names:
// inputs, datasets, checkpoints). NotFound when it does not exist.
absl::Status RequireRegularFile(const std::string& path);

// Opens `path` read-only for a file a model names (external data): without following a
// symbolic link in its last component and without blocking on a FIFO; refused unless it
// is a regular file. The caller closes the descriptor.
struct OpenFile {
  int fd;
  int64_t size;  // bytes, as fstat saw them when it was opened
};
absl::StatusOr<OpenFile> OpenRegularFileNoFollow(const std::string& path);

}  // namespace tandem
