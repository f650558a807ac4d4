// Plan: the executable form of a partitioned graph. Values get integer slots; each step
// holds its node's kernel, input/output slots and the slots whose last use it is, so the
// executor drops them right after (their buffers return to the allocator's pool and are
// reused by later steps). Subgraph attributes (If/Loop/Scan bodies) get their own plans.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/execution_provider.h"
#include "graph/graph.h"

namespace tandem {

// Looks up a value of an enclosing graph by name (null when unknown).
using OuterScope = std::function<const Tensor*(const std::string&)>;

// Per-node timing collected when profiling is on.
struct StepProfile {
  std::string node, op, provider;
  double total_us = 0;
  int64_t calls = 0;
};

// One executed node, recorded when tracing is on (runtime/trace.h writes them as a
// Chrome trace). Times are microseconds on the steady clock.
struct TraceEvent {
  std::string node, op, provider;
  std::string shapes;  // input shapes, e.g. "[1,3,32,32] [32,3,3,3]"
  double start_us = 0, duration_us = 0;
};

struct PlanCapture;  // runtime/plan_capture.h

class Plan {
 public:
  ~Plan();
  // `graph` must be partitioned (node.provider set) and outlive the plan.
  static absl::StatusOr<std::unique_ptr<Plan>> Build(
      const Graph& graph, const std::map<std::string, ExecutionProvider*>& providers,
      int num_threads);

  // Runs with inputs in the order of graph.inputs (undefined Tensor for an absent one),
  // returning graph.outputs in order. An input may live on any provider's device: host
  // kernels that read it directly get a host copy, device kernels the tensor itself.
  // The inputs are taken by value and moved into the plan's slots (callers that are done
  // with theirs pass them with std::move: a Tensor copy allocates its dims).
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs, const OuterScope& outer = nullptr);

  const Graph& graph() const { return graph_; }
  // Records the device work once and replays it as one launch on later runs with the
  // same input shapes (CUDA Graphs; runtime/plan_capture.h says which plans and when).
  // Off while profiling. Returns "" when this plan can be recorded, else why not.
  std::string EnableCapture();
  // "" while recording is on or pending; else why this plan runs launch by launch.
  std::string capture_status() const;
  int64_t replays() const;  // runs done by replaying a recording
  // Per-node timings (profile()); with `events`, also one TraceEvent per executed node
  // (trace()), which only a caller that writes a trace should ask for: they accumulate.
  void set_profiling(bool on, bool events = false);
  // Zeroes the per-node totals and drops the trace events (e.g. after a warm-up run that
  // built the primitives).
  void ResetProfile();
  std::vector<StepProfile> profile() const;
  // Every node executed since the last ResetProfile, in order (subgraph bodies included).
  const std::vector<TraceEvent>& trace() const { return trace_; }

 private:
  // Empties every slot of values_ when it goes out of scope (each run's way out: inputs
  // and constants are not held between runs); the vector keeps its capacity.
  struct ClearSlotsOnExit {
    std::vector<Tensor>& values;
    ~ClearSlotsOnExit() {
      for (Tensor& t : values) t = Tensor();
    }
  };
  struct Step {
    const Node* node = nullptr;
    ExecutionProvider* provider = nullptr;
    std::unique_ptr<Kernel> kernel;
    const KernelDef* def = nullptr;
    std::vector<int> inputs, outputs;
    std::vector<std::optional<Device>> input_device;  // per input: where the kernel reads it (any: none)
    std::vector<bool> wanted;
    std::vector<int> release_after;
    std::map<std::string, std::unique_ptr<Plan>> subplans;
    // Reused by every run (no per-step allocation): the kernel's inputs and outputs.
    std::vector<const Tensor*> input_values;
    std::vector<Tensor> output_values;
    double total_us = 0;
    int64_t calls = 0;
  };
  explicit Plan(const Graph& graph);
  int Slot(const std::string& name);
  // Fills the slots with the constants, the outer scope's values and `inputs` (and the
  // host shadows of device-fed inputs).
  absl::Status BindInputs(std::vector<Tensor>& inputs, const OuterScope& outer);
  // Every step in order, each kernel launched (what Run does without a recording).
  absl::StatusOr<std::vector<Tensor>> RunLaunches(std::vector<Tensor> inputs, const OuterScope& outer);
  // runtime/plan_capture.cc: the roles of the steps (or why the plan cannot be
  // recorded), and a run that records, replays or launches as the state says.
  std::string ClassifyForCapture(PlanCapture& c) const;
  absl::StatusOr<std::vector<Tensor>> RunCapturing(std::vector<Tensor> inputs);
  absl::StatusOr<std::vector<Tensor>> Record(std::vector<Tensor> inputs);
  absl::StatusOr<std::vector<Tensor>> Replay(std::vector<Tensor> inputs);
  // The steps of `role`, run in order on the bound slots.
  absl::Status RunRole(int role);
  // The graph outputs after the recorded work and the epilogue ran.
  absl::StatusOr<std::vector<Tensor>> CapturedOutputs(const std::vector<Tensor>& inputs);
  absl::Status RunStep(Step& step, std::vector<Tensor>& values, const OuterScope& outer);
  // Threads for one node: 1 when its inputs hold fewer than kSerialNodeElements elements
  // (waking an OpenMP team costs more than such a node's math: a 3x100 Gemm takes ~1 us,
  // a fork/join ~3 us), else num_threads_. A function of the input shapes alone, so a
  // kernel's cached oneDNN primitives are created and run with the same thread count.
  int ThreadsFor(const std::vector<const Tensor*>& inputs) const;
  static constexpr int64_t kSerialNodeElements = 16384;

  const Graph& graph_;
  std::map<std::string, int> slot_of_;
  std::vector<std::string> slot_names_;
  std::vector<std::pair<int, const Tensor*>> constants_;  // initializer slots
  std::vector<int> input_slots_, output_slots_;
  std::vector<bool> output_slot_repeats_;  // per output: its slot is also another output's
  std::vector<int> input_host_shadow_;  // per graph input: slot its host readers use, or -1
  std::vector<ExecutionProvider*> providers_;
  std::vector<std::pair<int, std::string>> outer_slots_;  // filled from OuterScope
  std::vector<Step> steps_;
  std::vector<Tensor> values_;  // per slot, during Run (kept between runs for its capacity)
  int num_threads_ = 1;
  bool profiling_ = false, tracing_ = false;
  std::vector<TraceEvent> trace_;
  std::unique_ptr<PlanCapture> capture_;  // set by EnableCapture
};

}  // namespace tandem
