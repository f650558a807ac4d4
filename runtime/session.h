// Session: load a model once, run it many times.
//
//   auto s = Session::Load("model.onnx", {});          // import, fold, partition, plan
//   auto outputs = s.value()->Run({{"x", tensor}});    // by input name
//
// Errors are Status values whose message names the file, node and op at fault.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "framework/plugin/provider_options.h"
#include "graph/graph.h"
#include "onnx_import/import.h"
#include "placement/partitioner.h"
#include "runtime/plan.h"
#include "runtime/thread_governor.h"

namespace tandem {

struct SessionOptions {
  int num_threads = 0;              // 0: all cores
  bool constant_folding = true;
  // Conv/Gemm/MatMul + activation (optimizer/activation_fusion.h), decomposed layer normalizations
  // (optimizer/layer_norm_fusion.h) and each provider's own rewrites
  // (ExecutionProvider::OptimizeGraph: the CPU's MatMul + bias folding and channel-blocked
  // convolution chains).
  bool fusion = true;
  bool profiling = false;           // per-node timings, see Session::profile()
  // Also one event per executed node (Session::trace(), for a Chrome trace): they
  // accumulate, so only callers that write a trace turn this on. Implies profiling.
  bool tracing = false;
  std::vector<std::string> providers = {"cpu"};  // in order of preference
  // How nodes are placed among the providers (see placement/partitioner.h). With
  // kLowestCost, a graph whose cheapest placement is all on the host becomes a CPU-only
  // session (the CPU-only fusions apply, the other providers are dropped).
  PartitionOptions::Policy placement = PartitionOptions::Policy::kPreferenceOrder;
  // kLowestCost: the sizes the caller will feed for symbolic dims, by name (see
  // DimValuesOf), for the estimates alone.
  std::map<std::string, int64_t> dim_values;
  std::set<std::string> resident_inputs;  // kLowestCost: see PartitionOptions
  // Graph outputs come back to the host; false leaves them where they were produced
  // (Session::ToHost copies one back), for callers that feed them back in.
  bool outputs_on_host = true;
  // A placement preview: providers from plugins are their preview providers (no device
  // needed, plugin_abi.h), and the session is built exactly as for a run (folding,
  // fusion, placement, copies, provider rewrites) but without plans: graph() and stats()
  // say where each node would run; Run fails. For `tandem inspect --device cuda` on a
  // machine without a GPU.
  bool placement_preview = false;
  // How the providers compute (float32, or TF32 products on the GPU), given to each one
  // when it is created.
  ProviderOptions provider_options;
  // Record the device work once and replay it per run (CUDA Graphs, runtime/plan_capture.h)
  // where the plan allows it. Off by default: a recording reserves its memory and holds
  // its input buffers; `tandem run/train/profile` turn it on (--no-cuda-graph turns it off).
  // A recording captures the GPU's stream, which every session of the process shares:
  // other threads' copies and waits on that GPU wait for it to end, but kernels another
  // thread launched meanwhile would join it, so do not run sessions on one GPU from
  // several threads with this on.
  bool device_graphs = false;
  // A host-only session with more than one thread picks each run's team size itself while
  // other programs keep cores busy (runtime/thread_governor.h): fewer threads when that
  // measures faster, all of them again when that does. Off: every run uses num_threads
  // (also with TANDEM_ADAPTIVE_THREADS=0 in the environment, and while profiling);
  // TANDEM_ADAPTIVE_THREADS=log writes each change of team size and why to stderr.
  bool adaptive_threads = true;
  // Where the governor reads the process's run-queue wait (microseconds, cumulative,
  // negative when unknown); null: the kernel's schedstat (runtime/run_queue_wait.h).
  // Tests give their own.
  std::function<double()> run_queue_wait;
  ImportOptions import;
};

struct SessionStats {
  int nodes_folded = 0;
  int nodes_removed = 0;
  int nodes_fused = 0;              // activations into their producer, LayerNorm patterns, dense-chain layers
  // Where the nodes were placed, device copies inserted, and kLowestCost's estimates.
  PartitionResult placement;
  int nodes_provider_rewritten = 0;  // by ExecutionProvider::OptimizeGraph (e.g. CPU layout)
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Load(const std::string& path,
                                                       const SessionOptions& options = {});
  static absl::StatusOr<std::unique_ptr<Session>> FromGraph(Graph graph,
                                                            const SessionOptions& options = {});
  ~Session();

  const Graph& graph() const { return *graph_; }
  const std::vector<ValueInfo>& inputs() const { return graph_->inputs; }
  const std::vector<ValueInfo>& outputs() const { return graph_->outputs; }
  const SessionStats& stats() const { return stats_; }

  // Runs with named feeds; returns every graph output in order. A missing input is an
  // error naming it; a feed whose dtype or rank contradicts the model is an error too.
  // Feeds may live on any of the session's devices: one already where its first reader
  // runs is used in place (no copy), which is how data stays resident on a GPU.
  // Thread-safe: concurrent calls each run their own Plan (kernels keep per-shape state),
  // built on first need and pooled, so N threads cost at most N plans.
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& feeds);
  // The same with one tensor per graph input, in the order of inputs(): no name lookups,
  // for callers that run a step many times (the trainer). Same checks and errors.
  absl::StatusOr<std::vector<Tensor>> RunInOrder(std::vector<Tensor> inputs);
  // Per-node timings summed over every plan the session has run (since creation or the
  // last ResetProfile(): callers drop a warm-up run, whose first calls build primitives).
  std::vector<StepProfile> profile() const;
  // The nodes executed since ResetProfile with their start and duration (tracing on).
  std::vector<TraceEvent> trace() const;
  // Turns per-node timing and trace events on or off for later runs (e.g. to time steps
  // without the per-node synchronisation profiling adds, then profile a few).
  void SetProfiling(bool profiling, bool tracing = false);
  void ResetProfile();
  size_t peak_memory_bytes() const;
  // SessionOptions::device_graphs: "" while runs are recorded and replayed (or will be,
  // from the second run with the same input shapes), else why they launch kernel by
  // kernel; and how many runs were replays.
  std::string device_graph_status() const;
  int64_t device_graph_replays() const;

  // Runs so far per team size (host sessions with adaptive_threads: a run under load may
  // use fewer than num_threads), and what the thread governor is doing ("" when off).
  std::map<int, int64_t> runs_per_team_size() const;
  std::string thread_governor_status() const;
  // The session's providers, in order of preference (the host provider is always there).
  std::vector<ExecutionProvider*> providers() const;
  // Waits until the work queued on every provider (kernels, copies) has finished: before
  // another session, with streams of its own, reads what this one's runs wrote.
  absl::Status Synchronize() const;
  // The first provider in the preference order (where ToDevice puts data).
  ExecutionProvider& primary_provider() const { return *providers_.front(); }
  // A copy of host tensor `t` on the primary provider's device (the same tensor when that
  // is the host), e.g. to keep parameters or a dataset resident across runs.
  absl::StatusOr<Tensor> ToDevice(const Tensor& t) const;
  // A host copy of `t` wherever it lives (the same tensor when already on the host).
  absl::StatusOr<Tensor> ToHost(const Tensor& t) const;

 private:
  Session() = default;
  // A plan no other call is running (a new one when all are busy); Release returns it.
  // Plans are built for one team size: a kernel's cached oneDNN primitives are created and
  // run with the same thread count.
  absl::StatusOr<Plan*> AcquirePlan(int threads);
  void ReleasePlan(Plan* plan, int threads);
  // The team size for the next run, and the governor's view of a finished one.
  int TeamForNextRun();
  void ReportRun(int threads, uint64_t shape_key, double run_us, double end_us);
  std::unique_ptr<Graph> graph_;
  std::vector<std::unique_ptr<ExecutionProvider>> providers_;
  std::map<std::string, ExecutionProvider*> providers_by_name_;
  bool profiling_ = false, tracing_ = false;
  bool preview_ = false;  // SessionOptions::placement_preview
  bool device_graphs_ = false;
  mutable std::mutex plans_mu_;
  std::vector<std::unique_ptr<Plan>> plans_;  // all plans; plans_[0] is built at load
  std::map<int, std::vector<Plan*>> idle_plans_;  // by team size
  std::map<int, int64_t> runs_per_team_size_;
  std::unique_ptr<ThreadGovernor> governor_;  // under plans_mu_; null: always num_threads_
  bool log_team_changes_ = false;  // TANDEM_ADAPTIVE_THREADS=log: each change to stderr
  SessionStats stats_;
  int num_threads_ = 1;
};

// "" when tensor `t` may be fed as `vi` (same dtype, every fixed dim equal); otherwise
// what is wrong, e.g. "has shape [2,3], the model expects [N,4]".
std::string FeedMismatch(const ValueInfo& vi, const Tensor& t);

// The values of the inputs' symbolic dims when fed tensors of `dims` (input name -> dims),
// e.g. {"batch", 128}: SessionOptions::dim_values for the sizes a caller will feed.
// The first input to name a dim gives its value; inputs of another rank are skipped.
std::map<std::string, int64_t> DimValuesOf(const std::vector<ValueInfo>& inputs,
                                           const std::map<std::string, Dims>& dims);

// Creates a provider by name: "cpu", or any plugin provider ("cuda" loads
// libtandem_cuda.so, see framework/plugin/provider_plugin.h; `preview`: the plugin's placement
// preview provider, which needs no device; `options` are given to a plugin's provider),
// or an error saying why not.
absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreateProvider(const std::string& name, bool preview = false,
                                                                  const ProviderOptions& options = {});

// Makes CreateProvider(name) call `factory` (an embedder's own provider, or a test's).
using ProviderFactory = std::function<std::unique_ptr<ExecutionProvider>()>;
void RegisterProviderFactory(const std::string& name, ProviderFactory factory);

}  // namespace tandem
