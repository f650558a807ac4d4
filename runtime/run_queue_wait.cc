#include "runtime/run_queue_wait.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace tandem {

namespace {
// The second field of a schedstat file ("<on-cpu ns> <run-queue ns> <timeslices>"), or -1.
double ReadRunQueueNs(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  char* end = nullptr;
  std::strtoull(text, &end, 10);  // time on a core
  if (end == text) return -1;
  char* after = nullptr;
  const unsigned long long wait_ns = std::strtoull(end, &after, 10);
  return after == end ? -1 : static_cast<double>(wait_ns);
}
}  // namespace

double ProcessRunQueueWaitUs() {
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return -1;
  double total_ns = 0;
  bool any = false;
  while (const dirent* e = readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    char path[300];  // a task name is a number; d_name may hold up to 255 bytes
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", e->d_name);
    const double ns = ReadRunQueueNs(path);
    if (ns < 0) continue;  // a thread that ended while we listed them
    total_ns += ns;
    any = true;
  }
  closedir(tasks);
  return any ? total_ns / 1000.0 : -1;
}

}  // namespace tandem
