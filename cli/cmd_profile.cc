// tandem profile: the CPU-vs-GPU picture of one model — time per op type on each device,
// a batch-size sweep with the crossover, and a Chrome trace of one step.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <functional>
#include <optional>
#include <cstdio>
#include <set>
#include <sstream>

#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "cli/lib/profile_report.h"
#include "cli/lib/run_inputs.h"
#include "cli/train_flags.h"
#include "onnx_import/atomic_file.h"
#include "placement/device_selection.h"
#include "runtime/session.h"
#include "runtime/trace.h"
#include "training/data.h"
#include "training/losses.h"
#include "training/trainer.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem profile MODEL.onnx [options]\n"
    "\n"
    "Runs inference (or, with --train, a training step) on each device and prints, side by\n"
    "side, the time per step, per op type, the speedup, peak memory and the copies between\n"
    "devices.\n"
    "\n"
    "options:\n"
    "  --compare cpu,cuda      devices to compare (default cpu,cuda; without a GPU, a one-line\n"
    "                          notice and the CPU alone)\n"
    "  --batch-sizes 1,8,64    also sweep dim 0 of every input: time per sample on each device,\n"
    "                          the crossover (smallest batch at which the GPU wins) and an SVG\n"
    "                          chart (--chart FILE.svg, default profile_batches.svg)\n"
    "  --trace FILE.json       Chrome trace (Perfetto, chrome://tracing) of one step per device:\n"
    "                          the step's span and one event per node inside it\n"
    "  --repeat N              timed steps per device and batch size, after a warm-up (default 10)\n"
    "  --input NAME=FILE.npy   an input (repeatable); others are random\n"
    "  --dim SYMBOL=N          symbolic dimension of random inputs (default 1)\n"
    "  --seed N                seed of the random inputs (default 0)\n"
    "  --threads N             CPU threads (default: all cores)\n"
    "training steps (--train): forward, backward and optimizer update, the data uploaded once\n"
    "  --train                 profile a training step instead of inference\n"
    "  --batch-size N          samples per step (default 32; --batch-sizes sweeps instead)\n"
    "  --x X.npy --y Y.npy     data (the first N rows); --input NAME=X.npy per model input;\n"
    "                          without them random inputs, and targets shaped for the loss\n"
    TANDEM_TRAIN_SPEC_HELP
    TANDEM_PRECISION_HELP
    TANDEM_CUDA_GRAPH_HELP
    TANDEM_LIMITS_HELP;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct DeviceRun {
  std::string device;
  std::vector<double> step_us;         // the timed steps
  std::vector<StepProfile> profile;    // summed over them
  std::vector<TraceEvent> trace;       // one more step, traced: its nodes' events
  TraceEvent traced_step;              // and the whole step's span, around them
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

// One timed step (microseconds, the device synchronised).
using TimedStep = std::function<absl::StatusOr<double>()>;

// Warm-up and `repeat` timed steps without profiling (its per-node synchronisation and
// bookkeeping would inflate them), `repeat` profiled steps, then one traced step.
// `s` is the session the step runs (a trainer's training session for --train).
absl::StatusOr<DeviceRun> ProfileDevice(Session& s, const std::string& device, const TimedStep& step, long repeat) {
  DeviceRun r;
  r.device = device;
  r.copies = s.stats().placement.copies_inserted;
  r.nodes = s.graph().nodes.size();
  if (auto warm = step(); !warm.ok()) return warm.status();
  for (long i = 0; i < repeat; ++i) {
    auto us = step();
    if (!us.ok()) return us.status();
    r.step_us.push_back(*us);
  }
  s.SetProfiling(true);
  s.ResetProfile();
  for (long i = 0; i < repeat; ++i)
    if (auto us = step(); !us.ok()) return us.status();
  r.profile = s.profile();
  s.SetProfiling(true, true);
  s.ResetProfile();
  const auto begin = std::chrono::steady_clock::now();
  auto traced = step();
  const auto end = std::chrono::steady_clock::now();
  if (!traced.ok()) return traced.status();
  r.trace = s.trace();
  // The span of the step in the nodes' clock (steady_clock), so a trace viewer nests the
  // node events under it and the gaps between them show the runtime's own time.
  r.traced_step.node = r.traced_step.op = "step";
  r.traced_step.provider = device;
  r.traced_step.start_us = std::chrono::duration<double, std::micro>(begin.time_since_epoch()).count();
  r.traced_step.duration_us = std::chrono::duration<double, std::micro>(end - begin).count();
  s.SetProfiling(false);  // the batch sweep times plain steps
  r.peak_bytes = s.peak_memory_bytes();
  return r;
}

// What one device runs: a session's inference, or a trainer's step (--train).
struct Workload {
  std::string device;
  std::unique_ptr<Session> session;
  std::unique_ptr<training::Trainer> trainer;
  Session& profiled() { return trainer ? trainer->training_session() : *session; }
};

// --train's data: given arrays (first `batch` rows), else random inputs and targets shaped
// for the loss (class labels for cross_entropy/nll, the model's output shape otherwise).
absl::StatusOr<training::Dataset> TrainBatch(const Graph& model, const training::Dataset* given, training::LossKind loss,
                                             const std::map<std::string, int64_t>& dims, unsigned seed, int64_t batch) {
  const std::string x_name = model.inputs[0].name;
  if (given) {
    if (given->size() < batch)
      return absl::InvalidArgumentError("batch " + std::to_string(batch) + " needs " + std::to_string(batch) +
                                        " rows; the data has " + std::to_string(given->size()));
    return training::SliceRows(*given, 0, batch);
  }
  std::vector<ValueInfo> inputs = model.inputs;
  for (ValueInfo& vi : inputs)
    if (vi.shape.rank_known && !vi.shape.dims.empty() && !vi.shape.dims[0].known()) vi.shape.dims[0].value = batch;
  auto feeds = AddRandomInputs(inputs, {}, dims, seed);
  if (!feeds.ok()) return feeds.status();
  training::Dataset d;
  d.x = (*feeds)[x_name];
  for (const auto& [name, t] : *feeds)
    if (name != x_name) d.more[name] = t;
  const ValueInfo& out = model.outputs[0];
  if (!out.shape.rank_known || out.shape.dims.empty())
    return absl::InvalidArgumentError("output '" + out.name + "' has no known shape to make targets for: give --y");
  if (training::TakesClassLabels(loss)) {
    if (out.shape.dims.size() != 2)
      return absl::InvalidArgumentError("output '" + out.name + "' is not [batch, classes]: give --y");
    const Dim& classes = out.shape.dims.back();
    if (!classes.known()) return absl::InvalidArgumentError("output '" + out.name + "' has no fixed class count: give --y");
    d.y = Tensor::Host(DataType::kInt64, {batch});
    for (int64_t i = 0; i < batch; ++i) d.y.data<int64_t>()[i] = (i * 7 + seed) % classes.value;
    return d;
  }
  std::map<std::string, Dims> fed;
  for (const auto& [name, t] : *feeds) fed[name] = t.dims();
  std::map<std::string, int64_t> bound = DimValuesOf(model.inputs, fed);
  bound.insert(dims.begin(), dims.end());
  ValueInfo target = out;
  target.name = "target";
  for (Dim& dim : target.shape.dims)
    if (!dim.known() && bound.count(dim.symbol)) dim.value = bound[dim.symbol];
  if (!target.shape.dims[0].known()) target.shape.dims[0].value = batch;  // a batch dim of its own name
  auto y = AddRandomInputs({target}, {}, {}, seed + 1);
  if (!y.ok()) return y.status();
  d.y = (*y)["target"];
  return d;
}

// A timed step of `w` at `batch` (0: the default inputs): inference with the feeds, or a
// training step on a batch uploaded to the trainer's device once.
absl::StatusOr<TimedStep> StepFor(Workload& w, const Graph& model, const std::map<std::string, Tensor>& given_inputs,
                                  const training::Dataset* train_data, training::LossKind loss,
                                  const std::map<std::string, int64_t>& dims, unsigned seed, int64_t batch) {
  if (!w.trainer) {
    auto feeds = Feeds(*w.session, given_inputs, dims, seed, batch);
    if (!feeds.ok()) return feeds.status();
    Session* s = w.session.get();
    return TimedStep([s, feeds = std::move(*feeds)] { return TimedRun(*s, feeds); });
  }
  auto data = TrainBatch(model, train_data, loss, dims, seed, batch);
  if (!data.ok()) return data.status();
  training::Trainer* t = w.trainer.get();
  auto resident = t->ToDevice(*data);
  if (!resident.ok()) return resident.status();
  return TimedStep([t, inputs = resident->Inputs(model.inputs[0].name),
                    y = std::move(resident->y)]() -> absl::StatusOr<double> {
    const auto t0 = std::chrono::steady_clock::now();
    auto loss = t->Step(inputs, y);  // returns the loss on the host: the step has finished
    if (!loss.ok()) return loss.status();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  });
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "error: tandem profile: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int Profile(int argc, char** argv) {
  std::vector<std::string> value_flags = {"--compare", "--batch-sizes", "--chart", "--trace", "--repeat", "--input",
                                         "--dim", "--seed", "--threads", "--batch-size", "--x", "--y",
                                         "--precision"};
  std::vector<std::string> bool_flags = {"--train", "--no-cuda-graph"};
  value_flags.insert(value_flags.end(), TrainSpecValueFlags().begin(), TrainSpecValueFlags().end());
  bool_flags.insert(bool_flags.end(), TrainSpecBoolFlags().begin(), TrainSpecBoolFlags().end());
  Args a = Parse(argc, argv, value_flags, bool_flags, kUsage);
  if (a.positional.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string model = a.positional[0];
  const long repeat = a.get_int("--repeat", 10, 1);
  const unsigned seed = static_cast<unsigned>(a.get_int("--seed", 0, 0, UINT32_MAX));
  auto files = ParseAssignments(a.all("--input"), "--input", "NAME=FILE.npy");
  auto dims = ParseDimSpecs(a.all("--dim"), "--dim");
  if (!files.ok() || !dims.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string((files.ok() ? dims.status() : files.status()).message()).c_str());
    return 2;
  }
  std::vector<int64_t> batches;
  for (absl::string_view b : absl::StrSplit(a.get("--batch-sizes"), ',', absl::SkipEmpty())) {
    auto v = ParseInt64(std::string_view(b.data(), b.size()), 1);
    if (!v.ok()) {
      std::fprintf(stderr, "error: --batch-sizes expects positive integers like 1,8,64, got '%s'\n",
                   a.get("--batch-sizes").c_str());
      return 2;
    }
    batches.push_back(*v);
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
  const bool train = a.has("--train");
  if (!train && (a.has("--x") || a.has("--y") || a.has("--batch-size")))
    return Fail(absl::InvalidArgumentError("--x, --y and --batch-size profile training steps: add --train"));
  training::TrainerOptions trainer_options;
  if (auto st = TrainSpecFromFlags(a, &trainer_options); !st.ok()) return Fail(st);
  trainer_options.num_threads = static_cast<int>(a.get_int("--threads", 0, 0, kMaxThreads));
  trainer_options.provider_options = ProviderOptionsFromFlags(a);
  trainer_options.device_graphs = DeviceGraphsFromFlags(a);
  auto graph = ImportModelFile(model);
  if (!graph.ok()) return Fail(graph.status());
  if (graph->inputs.empty() || graph->outputs.empty())
    return Fail(absl::InvalidArgumentError("the model has no inputs or no outputs to profile"));
  std::map<std::string, Tensor> given_inputs;  // inference: --input files
  std::optional<training::Dataset> train_data;  // --train: --x/--y or --input ... --y
  if (train && (a.has("--x") || a.has("--input"))) {
    auto d = a.has("--input") ? training::LoadNpyInputs(*files, graph->inputs[0].name, a.get("--y"))
                              : training::LoadNpyDataset(a.get("--x"), a.get("--y"));
    if (!d.ok()) return Fail(d.status());
    train_data = std::move(*d);
  } else if (!train) {
    auto given = ReadNpyFiles(*files);
    if (!given.ok()) return Fail(given.status());
    given_inputs = std::move(*given);
  }
  const int64_t batch = train ? a.get_int("--batch-size", 32, 1) : 0;
  auto step_for = [&](Workload& w, int64_t b) {
    return StepFor(w, *graph, given_inputs, train_data ? &*train_data : nullptr, trainer_options.spec.loss, *dims,
                   seed, b);
  };

  std::vector<DeviceRun> runs;
  std::map<std::string, Workload> workloads;
  for (const auto& [device, providers] : devices) {
    Workload& w = workloads[device];
    w.device = device;
    if (train) {
      training::TrainerOptions o = trainer_options;
      o.providers = providers;
      auto t = training::Trainer::Create(*graph, o);
      if (!t.ok()) return Fail(t.status());
      w.trainer = std::move(*t);
    } else {
      SessionOptions so;
      so.providers = providers;
      so.num_threads = static_cast<int>(a.get_int("--threads", 0, 0, kMaxThreads));
      so.provider_options = trainer_options.provider_options;
      so.device_graphs = trainer_options.device_graphs;
      auto s = Session::FromGraph(*graph, so);
      if (!s.ok()) return Fail(s.status());
      w.session = std::move(*s);
    }
    auto step = step_for(w, batch);
    if (!step.ok()) return Fail(step.status());
    auto r = ProfileDevice(w.profiled(), device, *step, repeat);
    if (!r.ok()) return Fail(r.status());
    runs.push_back(std::move(*r));
  }
  if (train)
    std::printf("training step: %s loss, %s, batch %lld\n", training::LossName(trainer_options.spec.loss).c_str(),
                training::OptimizerName(trainer_options.spec.optimizer.kind), static_cast<long long>(batch));

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
  std::printf("\n%-28s", "op type (us/step)");
  for (const DeviceRun& r : runs) std::printf(" %12s", r.device.c_str());
  if (runs.size() > 1) std::printf(" %9s", "speedup");
  std::printf("\n");
  for (const std::string& op : ops) {
    std::printf("%-28s", op.c_str());
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
      all.push_back(r.traced_step);
      all.insert(all.end(), r.trace.begin(), r.trace.end());
      double sum = 0, outer_end = -HUGE_VAL;  // the outermost nodes' time (bodies run inside theirs)
      for (const TraceEvent& e : r.trace) {
        if (e.start_us < outer_end) continue;
        sum += e.duration_us;
        outer_end = e.start_us + e.duration_us;
      }
      std::printf("trace %s: step event + %zu node events (%zu nodes), %.1f us in nodes of a %.1f us step (%.1f%%)\n",
                  r.device.c_str(), r.trace.size(), r.nodes, sum, r.traced_step.duration_us,
                  100 * sum / r.traced_step.duration_us);
    }
    if (auto s = WriteChromeTrace(all, a.get("--trace")); !s.ok()) return Fail(s);
    std::printf("wrote %s (open in Perfetto or chrome://tracing)\n", a.get("--trace").c_str());
  }

  if (!batches.empty()) {
    std::map<std::string, std::vector<double>> per_step;  // device -> median us per batch size
    for (const DeviceRun& r : runs) {
      for (int64_t b : batches) {
        auto step = step_for(workloads[r.device], b);
        if (!step.ok()) return Fail(step.status());
        if (auto warm = (*step)(); !warm.ok()) return Fail(warm.status());
        std::vector<double> us;
        for (long i = 0; i < repeat; ++i) {
          auto t = (*step)();
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
