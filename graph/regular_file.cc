#include "graph/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tandem {

namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file";
}

absl::Status NotRegular(const std::string& path, mode_t mode) {
  return absl::InvalidArgumentError("'" + path + "' is " + KindOf(mode) + ", not a regular file");
}

}  // namespace

absl::Status RequireRegularFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return absl::ErrnoToStatus(errno, "cannot open '" + path + "'");
  return S_ISREG(st.st_mode) ? absl::OkStatus() : NotRegular(path, st.st_mode);
}

absl::StatusOr<OpenFile> OpenRegularFileNoFollow(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return absl::InvalidArgumentError("'" + path + "' is a symbolic link, not a regular file");
    return absl::ErrnoToStatus(errno, "cannot open '" + path + "'");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    close(fd);
    return NotRegular(path, mode);
  }
  // Reads of a regular file do not block; the flag only kept open() from waiting on a FIFO.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return OpenFile{fd, static_cast<int64_t>(st.st_size)};
}

}  // namespace tandem
