// Session: load a model once, run it many times.
//
//   auto s = Session::Load("model.onnx", {});          // import, fold, partition, plan
//   auto outputs = s.value()->Run({{"x", tensor}});    // by input name
//
// Errors are Status values whose message names the file, node and op at fault.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "onnx_import/import.h"
#include "providers/execution_provider.h"
#include "runtime/plan.h"

namespace tandem {

struct SessionOptions {
  int num_threads = 0;              // 0: all cores
  bool constant_folding = true;
  bool fusion = true;               // Conv/Gemm/MatMul + activation, see runtime/fusion.h
  bool profiling = false;           // per-node timings, see Session::profile()
  std::vector<std::string> providers = {"cpu"};  // in order of preference
  ImportOptions import;
};

struct SessionStats {
  int nodes_folded = 0;
  int nodes_removed = 0;
  int nodes_fused = 0;              // activations folded into their producer
  std::map<std::string, int> nodes_per_provider;
  int copies_inserted = 0;
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
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& feeds);
  std::vector<StepProfile> profile() const { return plan_->profile(); }
  size_t peak_memory_bytes() const;

 private:
  Session() = default;
  std::unique_ptr<Graph> graph_;
  std::vector<std::unique_ptr<ExecutionProvider>> providers_;
  std::unique_ptr<Plan> plan_;
  SessionStats stats_;
  int num_threads_ = 1;
};

// Creates a provider by name ("cpu"; "cuda" when the plugin is present), or an error.
absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreateProvider(const std::string& name);

}  // namespace tandem
