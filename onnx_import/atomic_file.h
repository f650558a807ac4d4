// Crash-safe file replacement: write a temporary file beside the target, fsync it,
// rename it over the target, fsync the folder. A reader sees the old file or the new
// one, never a partial one. Used for exported models and training checkpoints.
// A failed write (disk full, file-size limit, I/O error) returns "cannot write PATH:
// <errno text>", removes the temporary file and leaves PATH as it was.
#pragma once
#include <string>

#include "absl/status/status.h"

namespace tandem {

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace tandem
