#include "runtime/thread_governor.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace tandem {

namespace {
double Median(std::vector<double> v) {  // v not empty
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void Keep(std::vector<double>& times, double t, size_t last) {
  times.push_back(t);
  if (times.size() > last) times.erase(times.begin());
}
}  // namespace

ThreadGovernor::ThreadGovernor(int full_threads, std::function<double()> waited_us)
    : full_(full_threads), waited_us_(std::move(waited_us)) {}

int ThreadGovernor::Threads() const {
  return phase_ == Phase::kTrial || phase_ == Phase::kReduced ? reduced_ : full_;
}

void ThreadGovernor::StartWindow(double now_us) {
  window_start_us_ = now_us;
  window_wait_us_ = waited_us_();
  measurable_ = window_wait_us_ >= 0;
}

void ThreadGovernor::RecordTime(int threads, double run_us) {
  Keep(threads == full_ ? full_times_ : reduced_times_, run_us, kCompareRuns);
}

void ThreadGovernor::Report(int threads, uint64_t shape_key, double run_us, double end_us) {
  if (!measurable_ || full_ <= 1) return;
  if (shape_key != shape_key_) {  // other shapes: earlier times say nothing about these
    shape_key_ = shape_key;
    full_times_.clear();
    reduced_times_.clear();
    if (phase_ == Phase::kTrial || phase_ == Phase::kProbe) compare_left_ = kCompareRuns;
  }
  const bool measured = !warmed_.insert({threads, shape_key}).second;
  if (measured) RecordTime(threads, run_us);
  switch (phase_) {
    case Phase::kFull: {
      if (window_start_us_ < 0) {
        StartWindow(end_us);
        return;
      }
      if (end_us - window_start_us_ < kWindowUs) return;
      const double wait = waited_us_();
      if (wait < 0) {
        measurable_ = false;
        return;
      }
      last_load_ = std::max(0.0, wait - window_wait_us_) / (end_us - window_start_us_);
      window_start_us_ = end_us;
      window_wait_us_ = wait;
      if (last_load_ < kLoadToTry || end_us < holdoff_until_us_ ||
          full_times_.size() < static_cast<size_t>(kCompareRuns))
        return;
      const int fewer = std::max(1, static_cast<int>(std::lround(last_load_)));
      reduced_ = std::max(1, full_ - fewer);
      StartComparison(Phase::kTrial, reduced_times_);
      return;
    }
    case Phase::kTrial:
      if (measured && threads == reduced_ && --compare_left_ <= 0) EndTrial(end_us);
      return;
    case Phase::kReduced:
      if (++runs_since_probe_ >= kProbeAfterRuns && end_us >= probe_at_us_) StartComparison(Phase::kProbe, full_times_);
      return;
    case Phase::kProbe:
      if (measured && threads == full_ && --compare_left_ <= 0) EndProbe(end_us);
      return;
  }
}

void ThreadGovernor::EndTrial(double now_us) {
  // Without times of both teams on these shapes (they changed during the trial), it lost.
  const bool both = !reduced_times_.empty() && !full_times_.empty();
  const double small = both ? Median(reduced_times_) : 0, full = both ? Median(full_times_) : 0;
  const bool won = both && small < (1 - kMinGain) * full;
  last_decision_ = absl::StrFormat("%s its trial under a load of %.2f threads (%.3g vs %.3g ms median)",
                                   won ? "the smaller team won" : "the smaller team lost", last_load_,
                                   small / 1e3, full / 1e3);
  if (won) {
    holdoff_us_ = kFirstHoldoffUs;
    probe_every_us_ = kFirstProbeUs;
    EnterReduced(now_us);
    return;
  }
  EnterFull(now_us);
  holdoff_us_ = std::min(2 * holdoff_us_, kMaxHoldoffUs);
}

void ThreadGovernor::EndProbe(double now_us) {
  // Without times of both teams on these shapes, the full team, the default, takes over.
  const bool both = !reduced_times_.empty() && !full_times_.empty();
  const double full = both ? Median(full_times_) : 0, small = both ? Median(reduced_times_) : 0;
  if (!both || full < (1 - kMinGain) * small) {
    last_decision_ = absl::StrFormat("the full team won back (%.3g vs %.3g ms median)", full / 1e3, small / 1e3);
    EnterFull(now_us);
    return;
  }
  last_decision_ = absl::StrFormat("the full team lost its probe (%.3g vs %.3g ms median)", full / 1e3, small / 1e3);
  probe_every_us_ = std::min(2 * probe_every_us_, kMaxProbeUs);
  EnterReduced(now_us);
}

void ThreadGovernor::StartComparison(Phase phase, std::vector<double>& times_to_collect) {
  times_to_collect.clear();
  compare_left_ = kCompareRuns;
  phase_ = phase;
  ++changes_;
}

void ThreadGovernor::EnterFull(double now_us) {
  phase_ = Phase::kFull;
  holdoff_until_us_ = now_us + holdoff_us_;
  StartWindow(now_us);
  ++changes_;
}

void ThreadGovernor::EnterReduced(double now_us) {
  phase_ = Phase::kReduced;
  probe_at_us_ = now_us + probe_every_us_;
  runs_since_probe_ = 0;
  ++changes_;
}

std::string ThreadGovernor::Describe() const {
  if (!measurable_) return absl::StrFormat("%d threads: this system does not report run-queue waits", full_);
  switch (phase_) {
    case Phase::kTrial:
      return absl::StrFormat("trying %d of %d threads under a load of %.2f threads", reduced_, full_, last_load_);
    case Phase::kProbe:
      return absl::StrFormat("trying all %d threads again (%d ran faster under load)", full_, reduced_);
    default:
      return absl::StrFormat("%d of %d threads: %s", Threads(), full_, last_decision_);
  }
}

}  // namespace tandem
