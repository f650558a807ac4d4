// ThreadGovernor: the team size of a session's next run, when other programs want the
// cores too.
//
// Each parallel region of a run waits for its slowest thread. When another program keeps
// a core busy, the scheduler takes turns between it and one of the session's threads, and
// the regions wait for whichever thread is off its core: mobilenetv3 at batch 1 on 2
// threads took 9.6 ms beside one spinning process and 6.5 ms on 1 thread (ONNX Runtime on 2
// threads: 8.6 ms). Under load a smaller team can be the faster one; unloaded it is not.
//
// The governor watches the run-queue wait of the process's threads (time spent ready to run
// but off a core: runtime/run_queue_wait.h) over windows of at least kWindowUs. While the
// session runs with all its threads, a window in which that wait reached half a thread's
// worth (kLoadToTry) starts a trial: kCompareRuns runs with as many fewer threads as the
// wait amounts to (at least one fewer), against the last kCompareRuns runs at full
// strength. The smaller team stays only if its median run is at least kMinGain faster; a
// failed trial is not tried again for a hold-off that doubles each time (2 s up to 64 s).
// While the smaller team runs, the full team is tried again now and then (after at least
// kProbeAfterRuns runs and a second that doubles while it keeps losing, up to 8 s), and
// takes over as soon as it wins: when the other program stops.
//
// Runs are compared only with runs of the same input shapes (a shape key), and the first
// run of each team size on each shape is never measured (it builds the kernels' primitives).
// Pure logic, not thread-safe: the caller (Session, under a lock) measures its runs and
// runs each with Threads() threads.
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tandem {

class ThreadGovernor {
 public:
  static constexpr double kWindowUs = 50'000;
  static constexpr double kLoadToTry = 0.5;  // threads' worth of run-queue wait
  static constexpr int kCompareRuns = 5;
  static constexpr double kMinGain = 0.05;
  static constexpr double kFirstHoldoffUs = 2e6, kMaxHoldoffUs = 64e6;
  static constexpr double kFirstProbeUs = 1e6, kMaxProbeUs = 8e6;
  static constexpr int kProbeAfterRuns = 20;

  // `full_threads` > 1: the session's team size. `waited_us` returns the process's
  // cumulative run-queue wait in microseconds, negative when unknown (the governor then
  // keeps the full team).
  ThreadGovernor(int full_threads, std::function<double()> waited_us);

  // The team size for the next run.
  int Threads() const;
  // A finished run: the team it ran with, its inputs' shape key, its wall time and the time
  // it ended (microseconds from any fixed origin, non-decreasing).
  void Report(int threads, uint64_t shape_key, double run_us, double end_us);
  // What the governor is doing and why, for logs and tests, e.g. "1 of 2 threads: the
  // smaller team won its trial (6.4 vs 9.5 ms median)".
  std::string Describe() const;
  // How many times the team size changed so far (a trial or a probe started or ended).
  int64_t changes() const { return changes_; }

 private:
  enum class Phase { kFull, kTrial, kReduced, kProbe };
  void StartWindow(double now_us);
  void RecordTime(int threads, double run_us);
  void EndTrial(double now_us);
  void EndProbe(double now_us);
  // A trial (the smaller team) or probe (the full team): `times_to_collect` restarts.
  void StartComparison(Phase phase, std::vector<double>& times_to_collect);
  // The full team, the next trial after the hold-off; or the smaller team, the next probe
  // after probe_every_us_.
  void EnterFull(double now_us);
  void EnterReduced(double now_us);

  const int full_;
  std::function<double()> waited_us_;
  bool measurable_ = true;
  Phase phase_ = Phase::kFull;
  int reduced_ = 0;
  int compare_left_ = 0;  // measured runs left in a trial or a probe
  std::vector<double> full_times_, reduced_times_;  // the last kCompareRuns of each team
  uint64_t shape_key_ = 0;
  std::set<std::pair<int, uint64_t>> warmed_;  // (team size, shape key) already run
  double window_start_us_ = -1, window_wait_us_ = 0;
  double holdoff_until_us_ = 0, holdoff_us_ = kFirstHoldoffUs;
  double probe_at_us_ = 0, probe_every_us_ = kFirstProbeUs;
  int runs_since_probe_ = 0;
  double last_load_ = 0;
  int64_t changes_ = 0;
  std::string last_decision_ = "no load seen";
};

}  // namespace tandem
