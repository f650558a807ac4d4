// The thread governor (runtime/thread_governor.h) on simulated runs: a clock and a run-queue
// wait advanced by the test, run times chosen per team size. And the process's run-queue
// wait as the kernel reports it (runtime/run_queue_wait.h).
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <utility>
#include <vector>
#include <thread>

#include "runtime/run_queue_wait.h"
#include "runtime/thread_governor.h"

namespace tandem {
namespace {

// A session's runs in simulated time: each run takes `run_ms(threads)` and adds
// `load(threads)` threads' worth of run-queue wait over its duration.
struct Simulation {
  double now_us = 0, wait_us = 0;
  ThreadGovernor governor;
  std::map<int, int> runs;  // per team size

  explicit Simulation(int threads) : governor(threads, [this] { return wait_us; }) {}

  void Run(double seconds, const std::function<double(int)>& run_ms, const std::function<double(int)>& load,
           uint64_t shape_key = 7) {
    const double until = now_us + seconds * 1e6;
    while (now_us < until) {
      const int threads = governor.Threads();
      const double us = run_ms(threads) * 1e3;
      now_us += us;
      wait_us += load(threads) * us;
      governor.Report(threads, shape_key, us, now_us);
      ++runs[threads];
    }
  }
};

// Beside one busy program on two cores (mobilenetv3 at batch 1): 9.6 ms on both threads,
// while the run-queue wait grows by 0.7 threads' worth; 6.5 ms on one thread, no wait.
double BusyCoreMs(int threads) { return threads == 2 ? 9.6 : 6.5; }
double BusyCoreLoad(int threads) { return threads == 2 ? 0.7 : 0.0; }

TEST(ThreadGovernor, KeepsTheFullTeamWithoutLoad) {
  Simulation sim(2);
  sim.Run(60, [](int t) { return t == 2 ? 4.0 : 6.5; }, [](int) { return 0.0; });
  sim.Run(60, [](int t) { return t == 2 ? 4.0 : 6.5; }, [](int) { return 0.4; });  // below kLoadToTry
  EXPECT_EQ(sim.runs.count(1), 0u) << sim.governor.Describe();
  EXPECT_EQ(sim.governor.Threads(), 2);
}

TEST(ThreadGovernor, TheSmallerTeamTakesOverWhereItRunsFaster) {
  Simulation sim(2);
  sim.Run(0.5, BusyCoreMs, BusyCoreLoad);
  EXPECT_EQ(sim.governor.Threads(), 1) << sim.governor.Describe();
  EXPECT_NE(sim.governor.Describe().find("won"), std::string::npos) << sim.governor.Describe();
  // It stays while the load does: the full team is retried now and then and loses.
  sim.runs.clear();
  sim.Run(60, BusyCoreMs, BusyCoreLoad);
  EXPECT_EQ(sim.governor.Threads(), 1);
  EXPECT_GT(sim.runs[1], 50 * sim.runs[2]) << sim.runs[1] << " runs on 1, " << sim.runs[2] << " on 2";
}

TEST(ThreadGovernor, ASlowerSmallerTeamIsDroppedAndTriedLessOften) {
  Simulation sim(2);
  // Load, but the full team stays faster (a large model's long regions).
  auto ms = [](int t) { return t == 2 ? 60.0 : 100.0; };
  sim.Run(120, ms, [](int t) { return t == 2 ? 0.8 : 0.0; });
  EXPECT_EQ(sim.governor.Threads(), 2) << sim.governor.Describe();
  EXPECT_NE(sim.governor.Describe().find("lost"), std::string::npos) << sim.governor.Describe();
  // Trials start 2, 4, 8, 16, 32, 64 s after the one before: at most 7 in 120 s, each one
  // unmeasured first run plus kCompareRuns.
  EXPECT_GT(sim.runs[1], 0);
  EXPECT_LE(sim.runs[1], 7 * (1 + ThreadGovernor::kCompareRuns));
}

TEST(ThreadGovernor, TheFullTeamReturnsWhenTheLoadGoes) {
  Simulation sim(2);
  sim.Run(5, BusyCoreMs, BusyCoreLoad);
  ASSERT_EQ(sim.governor.Threads(), 1);
  // The other program ended: both threads 4 ms; one thread still 6.5 ms, no wait.
  sim.Run(ThreadGovernor::kMaxProbeUs / 1e6 + 1, [](int t) { return t == 2 ? 4.0 : 6.5; },
          [](int) { return 0.0; });
  EXPECT_EQ(sim.governor.Threads(), 2) << sim.governor.Describe();
  EXPECT_NE(sim.governor.Describe().find("won back"), std::string::npos) << sim.governor.Describe();
}

TEST(ThreadGovernor, DropsAsManyThreadsAsTheWaitAmountsTo) {
  for (const auto& [wait, expected] : std::vector<std::pair<double, int>>{{0.94, 15}, {3.2, 13}, {40.0, 1}}) {
    const double load = wait;  // C++17 lambdas cannot capture a structured binding
    Simulation sim(16);
    for (int i = 0; i < 100 && sim.governor.Threads() == 16; ++i)  // until the trial starts
      sim.Run(0.001, [](int) { return 10.0; }, [&](int t) { return t == 16 ? load : 0.0; });
    EXPECT_EQ(sim.governor.Threads(), expected) << "load " << load << ": " << sim.governor.Describe();
  }
}

TEST(ThreadGovernor, TheFirstRunOfATeamIsNotMeasured) {
  Simulation sim(2);
  int one_thread_runs = 0;
  // The first run on one thread builds its primitives (500 ms): the trial measures the
  // kCompareRuns runs after it.
  auto ms = [&](int t) { return t == 2 ? 9.6 : (one_thread_runs++ == 0 ? 500.0 : 6.5); };
  for (int i = 0; i < 1000 && sim.governor.Describe().find(" its trial") == std::string::npos; ++i)
    sim.Run(0.001, ms, BusyCoreLoad);
  EXPECT_EQ(sim.runs[1], 1 + ThreadGovernor::kCompareRuns) << sim.governor.Describe();
  EXPECT_EQ(sim.governor.Threads(), 1) << sim.governor.Describe();
}

TEST(ThreadGovernor, RunsOfOtherShapesAreNotCompared) {
  Simulation sim(2);
  for (int i = 0; i < 1000 && sim.governor.Threads() == 2; ++i)  // until a trial starts
    sim.Run(0.001, BusyCoreMs, BusyCoreLoad, /*shape_key=*/1);
  ASSERT_EQ(sim.governor.Threads(), 1);
  // The inputs change shape during the trial: 4 ms on one thread, 3 ms on two. Against the
  // 9.6 ms of the other shape the trial would be won; with no full-team time on these
  // shapes it is not.
  for (int i = 0; i < 1000 && sim.governor.Describe().find(" its trial") == std::string::npos; ++i)
    sim.Run(0.001, [](int t) { return t == 2 ? 3.0 : 4.0; }, [](int) { return 0.0; }, /*shape_key=*/2);
  EXPECT_EQ(sim.governor.Threads(), 2) << sim.governor.Describe();
}

TEST(ThreadGovernor, KeepsTheFullTeamWhereWaitsAreUnknown) {
  double now = 0;
  ThreadGovernor g(2, [] { return -1.0; });
  for (int i = 0; i < 1000; ++i) {
    now += 9600;
    g.Report(g.Threads(), 7, 9600, now);
  }
  EXPECT_EQ(g.Threads(), 2);
  EXPECT_NE(g.Describe().find("does not report"), std::string::npos) << g.Describe();
}

// Two threads spinning on one core for 300 ms take turns: each waits about half the time.
TEST(RunQueueWait, GrowsWhileTwoThreadsShareOneCore) {
  const double before = ProcessRunQueueWaitUs();
  if (before < 0) GTEST_SKIP() << "this kernel does not report run-queue waits (schedstat)";
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  int core = 0;
  while (!CPU_ISSET(core, &mine)) ++core;
  std::atomic<bool> stop{false};
  auto spin = [&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(core, &one);
    sched_setaffinity(0, sizeof(one), &one);  // this thread only
    volatile uint64_t n = 0;
    while (!stop.load(std::memory_order_relaxed)) n = n + 1;
  };
  std::thread a(spin), b(spin);
  const double during = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return ProcessRunQueueWaitUs();  // read while both live: an ended thread stops counting
  }();
  stop = true;
  a.join();
  b.join();
  // ~300 ms between them when they alternate; a third of it is plenty to tell.
  EXPECT_GT(during - before, 100e3) << "before " << before << " us, during " << during << " us";
}

}  // namespace
}  // namespace tandem
