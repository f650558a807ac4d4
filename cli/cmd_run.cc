// tandem run: run a model on .npy inputs (or random ones) and report latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/cli.h"
#include "cli/lib/output_file_names.h"
#include "cli/lib/run_inputs.h"
#include "framework/execution_provider.h"
#include "runtime/npy.h"
#include "runtime/session.h"
#include "runtime/trace.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem run [options] MODEL.onnx\n"
    "\n"
    "Runs the model once (plus --repeat timed runs) and prints each output's shape\n"
    "and first values, and latency percentiles.\n"
    "\n"
    "options:\n"
    "  --input NAME=FILE.npy   an input (repeatable); inputs not given are random\n"
    "  --dim SYMBOL=N          value for a symbolic dimension of random inputs (default 1)\n"
    "  --output-dir DIR        write each output as DIR/<name>.npy (DIR is created; a name\n"
    "                          with '/', '..' or control characters is made a safe file\n"
    "                          name inside DIR, and a note says so)\n"
    "  --repeat N              timed runs after one warm-up run (default 10)\n"
    "  --threads N             threads (default: all cores); while other programs keep\n"
    "                          cores busy, runs use fewer where that measures faster\n"
    "  --fixed-threads         every run on --threads threads, busy cores or not\n"
    "  --seed N                seed for random inputs (default 0)\n"
    "  --profile               per-node time table over the timed runs\n"
    "  --trace FILE.json       Chrome trace of the timed runs (implies --profile's timing)\n"
    "  --no-fusion             keep Conv/Gemm/MatMul and their activations apart\n"
    TANDEM_DEVICE_HELP
    TANDEM_PRECISION_HELP
    TANDEM_CUDA_GRAPH_HELP
    TANDEM_LIMITS_HELP;

std::string Preview(const Tensor& t) {
  std::string s;
  if (t.dtype() == DataType::kString) return "(strings)";
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 6); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", t.ElementAsDouble(i));
    s += buf;
  }
  return s + (t.numel() > 6 ? ", ..." : "");
}
}  // namespace

int Run(int argc, char** argv) {
  Args a = Parse(argc, argv, {"--input", "--dim", "--output-dir", "--repeat", "--threads", "--seed", "--device", "--trace",
                                "--precision"},
                 {"--profile", "--no-fusion", "--no-cuda-graph", "--fixed-threads"}, kUsage);
  if (a.positional.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (a.has("--output-dir")) {  // created up front: a typo fails before a long run, not after
    std::error_code ec;
    std::filesystem::create_directories(a.get("--output-dir"), ec);
    if (ec) {
      std::fprintf(stderr, "error: cannot create %s: %s\n", a.get("--output-dir").c_str(), ec.message().c_str());
      return 1;
    }
  }
  SessionOptions so;
  so.num_threads = static_cast<int>(a.get_int("--threads", 0, 0, kMaxThreads));
  so.adaptive_threads = !a.has("--fixed-threads");
  so.profiling = a.has("--profile");
  so.tracing = a.has("--trace");
  so.fusion = !a.has("--no-fusion");
  const DeviceChoice device_choice = DeviceFromFlags(a);
  so.providers = device_choice.providers;
  so.placement = device_choice.placement;
  so.provider_options = ProviderOptionsFromFlags(a);
  so.device_graphs = DeviceGraphsFromFlags(a);
  auto graph = ImportModelFile(a.positional[0], so.import);
  if (!graph.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(graph.status().message()).c_str());
    return 1;
  }
  auto files = ParseAssignments(a.all("--input"), "--input", "NAME=FILE.npy");
  auto dims = ParseDimSpecs(a.all("--dim"), "--dim");
  if (!files.ok() || !dims.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string((files.ok() ? dims.status() : files.status()).message()).c_str());
    return 2;
  }
  auto read = ReadNpyFiles(*files);
  if (!read.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(read.status().message()).c_str());
    return 1;
  }
  auto completed = AddRandomInputs(graph->inputs, *read, *dims, static_cast<unsigned>(a.get_int("--seed", 0, 0, UINT32_MAX)));
  if (!completed.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(completed.status().message()).c_str());
    return 1;
  }
  std::map<std::string, Tensor> feeds = std::move(*completed);
  std::map<std::string, Dims> feed_dims;
  for (const auto& [name, t] : feeds) feed_dims[name] = t.dims();
  so.dim_values = DimValuesOf(graph->inputs, feed_dims);  // cost-based placement's sizes
  auto session = Session::FromGraph(std::move(*graph), so);
  if (!session.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  Session& s = **session;
  PrintPlacementChoice(s.stats().placement);
  for (const ValueInfo& vi : s.inputs())
    if (!read->count(vi.name))
      std::printf("input %s: random %s%s\n", vi.name.c_str(), DataTypeName(vi.dtype),
                  DimsToString(feeds[vi.name].dims()).c_str());
  auto first = s.Run(feeds);
  if (!first.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(first.status().message()).c_str());
    return 1;
  }
  std::vector<std::string> output_names;
  for (const ValueInfo& vi : s.outputs()) output_names.push_back(vi.name);
  const std::vector<OutputFileName> files_out = OutputFileNames(output_names, ".npy");
  for (size_t i = 0; i < first->size(); ++i) {
    const Tensor& t = (*first)[i];
    std::printf("output %s: %s%s [%s]\n", s.outputs()[i].name.c_str(), DataTypeName(t.dtype()),
                DimsToString(t.dims()).c_str(), Preview(t).c_str());
    if (a.has("--output-dir")) {
      if (files_out[i].changed)
        std::printf("note: output '%s' is written as %s (a model's names stay inside --output-dir)\n",
                    s.outputs()[i].name.c_str(), files_out[i].file.c_str());
      std::string file = a.get("--output-dir") + "/" + files_out[i].file;
      auto st = WriteNpy(file, t);
      if (!st.ok()) {
        std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
        return 1;
      }
    }
  }
  // The table covers the timed runs: the warm-up built the primitives (JIT code included).
  if (so.profiling || so.tracing) s.ResetProfile();
  const long repeat = a.get_int("--repeat", 10, 0);
  auto time_runs = [&](const std::map<std::string, Tensor>& in, const char* what) -> bool {
    std::vector<double> ms;
    for (long r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      auto out = s.Run(in);
      auto t1 = std::chrono::steady_clock::now();
      if (!out.ok()) {
        std::fprintf(stderr, "error: %s\n", std::string(out.status().message()).c_str());
        return false;
      }
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    if (ms.empty()) return true;
    std::sort(ms.begin(), ms.end());
    auto pct = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(p * ms.size()))]; };
    std::printf("latency%s over %zu runs (ms): min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n",
                what, ms.size(), ms.front(), pct(0.5), pct(0.9), pct(0.99), ms.back());
    return true;
  };
  ExecutionProvider& device = s.primary_provider();
  const bool on_device = device.device().type != DeviceType::kCpu;
  if (on_device) std::printf("device: %s\n", device.description().c_str());
  if (!time_runs(feeds, on_device ? " with host->device input copies" : "")) return 1;
  if (on_device) {  // the same inputs uploaded once and kept on the device
    std::map<std::string, Tensor> resident;
    for (const auto& [name, t] : feeds) {
      auto d = s.ToDevice(t);
      if (!d.ok()) {
        std::fprintf(stderr, "error: %s\n", std::string(d.status().message()).c_str());
        return 1;
      }
      resident[name] = std::move(*d);
    }
    if (!time_runs(resident, " with inputs resident on the device")) return 1;
  }
  PrintDeviceGraphStatus(s, 1 + (on_device ? 2 : 1) * repeat);
  if (const auto teams = s.runs_per_team_size(); teams.size() > 1) {  // other programs took cores
    std::string runs;
    for (const auto& [threads, n] : teams)
      runs += (runs.empty() ? "" : ", ") + std::to_string(n) + " on " + std::to_string(threads);
    std::printf("threads: runs per team size %s (%s)\n", runs.c_str(), s.thread_governor_status().c_str());
  }
  if (a.has("--profile")) PrintProfile(s.profile());
  if (a.has("--trace")) {
    if (auto st = WriteChromeTrace(s.trace(), a.get("--trace")); !st.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    std::printf("wrote %s\n", a.get("--trace").c_str());
  }
  std::printf("peak memory: %.2f MiB\n", s.peak_memory_bytes() / 1048576.0);
  return 0;
}

}  // namespace tandem::cli
