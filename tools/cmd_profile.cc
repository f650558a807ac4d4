// tandem profile: the CPU-vs-GPU picture of one model — time per op type on each device,
// a batch-size sweep with the crossover, and a Chrome trace of one step.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "onnx_import/atomic_file.h"
#include "runtime/device_selection.h"
#include "runtime/session.h"
#include "runtime/trace.h"
#include "tools/cli.h"
#include "tools/profile_report.h"
#include "tools/run_inputs.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem profile MODEL.onnx [options]\n"
    "\n"
    "Runs inference on each device and prints, side by side, the time per step, per op\n"
    "type, the speedup, peak memory and the copies between devices.\n"
    "\n"
    "options:\n"
    "  --compare cpu,cuda      devices to compare (default cpu,cuda; without a GPU, a one-line\n"
    "                          notice and the CPU alone)\n"
    "  --batch-sizes 1,8,64    also sweep dim 0 of every input: time per sample on each device,\n"
    "                          the crossover (smallest batch at which the GPU wins) and an SVG\n"
    "                          chart (--chart FILE.svg, default profile_batches.svg)\n"
    "  --trace FILE.json       Chrome trace (Perfetto, chrome://tracing) of one step per device\n"
    "  --repeat N              timed steps per device and batch size, after a warm-up (default 10)\n"
    "  --input NAME=FILE.npy   an input (repeatable); others are random\n"
    "  --dim SYMBOL=N          symbolic dimension of random inputs (default 1)\n"
    "  --seed N                seed of the random inputs (default 0)\n"
    "  --threads N             CPU threads (default: all cores)\n"
    TANDEM_LIMITS_HELP;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct DeviceRun {
  std::string device;
  std::vector<double> step_us;         // the timed steps
  std::vector<StepProfile> profile;    // summed over them
  std::vector<TraceEvent> trace;       // one more step, traced
  double traced_step_us = 0;
  size_t peak_bytes = 0;
  int copies = 0;
  size_t nodes = 0;
};

// The inputs: files as given, the rest random with dim 0 = `batch` when batch > 0.
absl::StatusOr<std::map<std::string, Tensor>> Feeds(const Session& s, const std::map<std::string, Tensor>& given,
                                                    const std::map<std::string, int64_t>& dims, unsigned seed,
                                                    int64_t batch) {
  std::vector<ValueInfo> inputs = s.inputs();
  for (ValueInfo& vi : inputs) {
    if (batch <= 0 || given.count(vi.name)) continue;
    if (!vi.shape.rank_known || vi.shape.dims.empty())
      return absl::InvalidArgumentError("input '" + vi.name + "' has no batch dimension to sweep");
    Dim& d0 = vi.shape.dims[0];
    if (d0.known() && d0.value != batch)
      return absl::InvalidArgumentError("input '" + vi.name + "' has a fixed batch dimension " +
                                        std::to_string(d0.value) + "; --batch-sizes needs a symbolic one");
    d0.value = batch;
  }
  return AddRandomInputs(inputs, given, dims, seed);
}

absl::StatusOr<double> TimedRun(Session& s, const std::map<std::string, Tensor>& feeds) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = s.Run(feeds);
  if (!out.ok()) return out.status();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

// Warm-up and `repeat` timed steps without profiling (its per-node synchronisation and
// bookkeeping would inflate them), `repeat` profiled steps, then one traced step.
absl::StatusOr<DeviceRun> ProfileDevice(Session& s, const std::string& device,
                                        const std::map<std::string, Tensor>& feeds, long repeat) {
  DeviceRun r;
  r.device = device;
  r.copies = s.stats().placement.copies_inserted;
  r.nodes = s.graph().nodes.size();
  if (auto warm = TimedRun(s, feeds); !warm.ok()) return warm.status();
  for (long i = 0; i < repeat; ++i) {
    auto us = TimedRun(s, feeds);
    if (!us.ok()) return us.status();
    r.step_us.push_back(*us);
  }
  s.SetProfiling(true);
  s.ResetProfile();
  for (long i = 0; i < repeat; ++i)
    if (auto us = TimedRun(s, feeds); !us.ok()) return us.status();
  r.profile = s.profile();
  s.SetProfiling(true, true);
  s.ResetProfile();
  auto traced = TimedRun(s, feeds);
  if (!traced.ok()) return traced.status();
  r.traced_step_us = *traced;
  r.trace = s.trace();
  s.SetProfiling(false);  // the batch sweep times plain steps
  r.peak_bytes = s.peak_memory_bytes();
  return r;
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "error: tandem profile: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int Profile(int argc, char** argv) {
  Args a = Parse(argc, argv, {"--compare", "--batch-sizes", "--chart", "--trace", "--repeat", "--input", "--dim",
                              "--seed", "--threads"},
                 {}, kUsage);
  if (a.positional.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string model = a.positional[0];
  const long repeat = std::max(1L, a.get_int("--repeat", 10));
  const unsigned seed = static_cast<unsigned>(a.get_int("--seed", 0));
  auto files = ParseAssignments(a.all("--input"), "--input", "NAME=FILE.npy");
  auto dims = ParseDimSpecs(a.all("--dim"), "--dim");
  if (!files.ok() || !dims.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string((files.ok() ? dims.status() : files.status()).message()).c_str());
    return 2;
  }
  std::vector<int64_t> batches;
  for (absl::string_view b : absl::StrSplit(a.get("--batch-sizes"), ',', absl::SkipEmpty())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(b, &v) || v <= 0) {
      std::fprintf(stderr, "error: --batch-sizes expects positive integers like 1,8,64, got '%s'\n",
                   a.get("--batch-sizes").c_str());
      return 2;
    }
    batches.push_back(v);
  }
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());

  // Devices: an absent accelerator is one line, then the CPU alone.
  std::vector<std::pair<std::string, std::vector<std::string>>> devices;
  for (absl::string_view d : absl::StrSplit(a.get("--compare", "cpu,cuda"), ',', absl::SkipEmpty())) {
    auto choice = ResolveDevice(std::string(d));
    if (!choice.ok()) {
      std::fprintf(stderr, "error: --compare: %s\n", std::string(choice.status().message()).c_str());
      return 2;
    }
    if (d != "cpu" && choice->device == "cpu") {
      std::printf("no GPU present (%s): profiling the CPU alone\n", choice->notice.c_str());
      continue;
    }
    devices.emplace_back(std::string(d), choice->providers);
  }
  if (devices.empty() || devices.front().first != "cpu") devices.insert(devices.begin(), {"cpu", {"cpu"}});
  auto given = ReadNpyFiles(*files);
  if (!given.ok()) return Fail(given.status());

  std::vector<DeviceRun> runs;
  std::map<std::string, std::unique_ptr<Session>> sessions;
  for (const auto& [device, providers] : devices) {
    SessionOptions so;
    so.providers = providers;
    so.num_threads = static_cast<int>(a.get_int("--threads", 0));
    auto s = Session::Load(model, so);
    if (!s.ok()) return Fail(s.status());
    auto feeds = Feeds(**s, *given, *dims, seed, 0);
    if (!feeds.ok()) return Fail(feeds.status());
    auto r = ProfileDevice(**s, device, *feeds, repeat);
    if (!r.ok()) return Fail(r.status());
    runs.push_back(std::move(*r));
    sessions[device] = std::move(*s);
  }

  // Per step and per op type, devices side by side.
  std::printf("%s: %zu nodes after load-time rewrites, %ld timed steps per device\n", model.c_str(), runs[0].nodes,
              repeat);
  for (const DeviceRun& r : runs)
    std::printf("  %-5s step min %9.1f us  median %9.1f us  peak memory %8.2f MiB  copies %d\n", r.device.c_str(),
                *std::min_element(r.step_us.begin(), r.step_us.end()), Median(r.step_us), r.peak_bytes / 1048576.0,
                r.copies);
  std::map<std::string, std::map<std::string, OpTypeTime>> by_device;
  std::set<std::string> ops;
  for (const DeviceRun& r : runs) {
    by_device[r.device] = ByOpType(r.profile, repeat);
    for (const auto& [op, t] : by_device[r.device]) ops.insert(op);
  }
  std::printf("\n%-24s", "op type (us/step)");
  for (const DeviceRun& r : runs) std::printf(" %12s", r.device.c_str());
  if (runs.size() > 1) std::printf(" %9s", "speedup");
  std::printf("\n");
  for (const std::string& op : ops) {
    std::printf("%-24s", op.c_str());
    for (const DeviceRun& r : runs) {
      auto it = by_device[r.device].find(op);
      if (it == by_device[r.device].end()) std::printf(" %12s", "-");
      else std::printf(" %12.1f", it->second.us_per_step);
    }
    if (runs.size() > 1) {
      const auto c = by_device["cpu"].find(op), g = by_device[runs[1].device].find(op);
      if (c != by_device["cpu"].end() && g != by_device[runs[1].device].end() && g->second.us_per_step > 0)
        std::printf(" %8.2fx", c->second.us_per_step / g->second.us_per_step);
    }
    std::printf("\n");
  }

  if (a.has("--trace")) {
    std::vector<TraceEvent> all;
    for (const DeviceRun& r : runs) {
      all.insert(all.end(), r.trace.begin(), r.trace.end());
      double sum = 0;
      for (const TraceEvent& e : r.trace) sum += e.duration_us;
      std::printf("trace %s: %zu node events (%zu nodes), %.1f us in nodes of a %.1f us step\n", r.device.c_str(),
                  r.trace.size(), r.nodes, sum, r.traced_step_us);
    }
    if (auto s = WriteChromeTrace(all, a.get("--trace")); !s.ok()) return Fail(s);
    std::printf("wrote %s (open in Perfetto or chrome://tracing)\n", a.get("--trace").c_str());
  }

  if (!batches.empty()) {
    std::map<std::string, std::vector<double>> per_step;  // device -> median us per batch size
    for (const DeviceRun& r : runs) {
      Session& s = *sessions[r.device];
      for (int64_t b : batches) {
        auto feeds = Feeds(s, {}, *dims, seed, b);
        if (!feeds.ok()) return Fail(feeds.status());
        if (auto warm = TimedRun(s, *feeds); !warm.ok()) return Fail(warm.status());
        std::vector<double> us;
        for (long i = 0; i < repeat; ++i) {
          auto t = TimedRun(s, *feeds);
          if (!t.ok()) return Fail(t.status());
          us.push_back(*t);
        }
        per_step[r.device].push_back(Median(us));
      }
    }
    std::printf("\n%-8s", "batch");
    for (const DeviceRun& r : runs) std::printf(" %16s", (r.device + " us/sample").c_str());
    std::printf("\n");
    for (size_t i = 0; i < batches.size(); ++i) {
      std::printf("%-8lld", static_cast<long long>(batches[i]));
      for (const DeviceRun& r : runs) std::printf(" %16.2f", per_step[r.device][i] / static_cast<double>(batches[i]));
      std::printf("\n");
    }
    if (runs.size() > 1) {
      auto cross = Crossover(batches, per_step["cpu"], per_step[runs[1].device]);
      if (cross) std::printf("crossover: the GPU wins from batch %lld\n", static_cast<long long>(*cross));
      else std::printf("crossover: none; the CPU wins at every batch size tried\n");
    }
    const std::string chart = a.get("--chart", "profile_batches.svg");
    if (auto s = WriteFileAtomically(chart, BatchChartSvg(batches, per_step, "tandem profile: " + model)); !s.ok())
      return Fail(s);
    std::printf("wrote %s\n", chart.c_str());
  }
  return 0;
}

}  // namespace tandem::cli
