#include "onnx_import/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace tandem {

namespace {
std::string Folder(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}
}  // namespace

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  // Unique per write: two threads saving to one path must not share a temporary file.
  static std::atomic<uint64_t> counter{0};
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(++counter);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // ENOENT (no such folder) -> NotFound, EACCES -> PermissionDenied, ...
  if (fd < 0) return absl::ErrnoToStatus(errno, "cannot write " + tmp);
  auto fail = [&](int err, bool fd_open) {
    if (fd_open) ::close(fd);
    ::unlink(tmp.c_str());
    return absl::ErrnoToStatus(err, "cannot write " + path);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return fail(w < 0 ? errno : EIO, true);
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) return fail(errno, true);
  if (::close(fd) != 0) return fail(errno, false);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail(errno, false);
  int dir = ::open(Folder(path).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return absl::OkStatus();
}

}  // namespace tandem
