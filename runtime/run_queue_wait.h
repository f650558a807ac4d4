// How long this process's threads have waited for a core: the time each spent ready to run
// while the scheduler gave its core to another thread (Linux's per-thread schedstat, the
// run-queue delay). Growing fast while a session runs means other programs want the same
// cores (runtime/thread_governor.h).
#pragma once

namespace tandem {

// The run-queue wait summed over the process's live threads, in microseconds since each
// started (a thread that has ended no longer counts, so the sum may drop), read from
// /proc/self/task/*/schedstat. Negative when the kernel does not report it (no procfs, or a
// kernel built without schedstat). Costs one small file read per thread.
double ProcessRunQueueWaitUs();

}  // namespace tandem
