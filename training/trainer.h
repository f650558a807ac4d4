// Trainer: owns the parameters and optimizer state, runs optimizer steps through the
// training graph and predictions through the inference graph, both as Sessions that are
// fed the trainer's own buffers (no copies of weights per step).
//
// On a device provider (options.providers = {"cuda", "cpu"}) the parameters, optimizer
// state and running statistics are uploaded once and stay on the device: the update
// kernels modify them there, the training graph's outputs are left on the device, and
// only the loss scalar comes back per step. Checkpoints and export copy back to the
// host when they are written. Batches may be fed as host or device tensors.
#pragma once
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/communicator.h"
#include "graph/graph.h"
#include "runtime/session.h"
#include "training/checkpoint.h"
#include "training/data.h"
#include "training/training_graph.h"

namespace tandem::training {

struct TrainerOptions {
  TrainingSpec spec;
  LrSchedule schedule;
  int num_threads = 0;
  bool profiling = false;  // per-node timings of the training graph, see profile()
  bool tracing = false;    // also trace events of its nodes, see trace()
  // Graph fusions (SessionOptions::fusion) and, when the CPU runs everything, dense
  // chains fused before the gradients are built and one node for all optimizer updates
  // (TrainingSpec::cpu_fusions, one_update_node).
  bool fusion = true;
  std::vector<std::string> providers = {"cpu"};  // preferred first, see placement/device_selection.h
  ProviderOptions provider_options;              // float32 or TF32 on the GPU (SessionOptions's)
  // The step recorded once and replayed (CUDA Graphs, SessionOptions::device_graphs);
  // training_session().device_graph_status() says whether it is.
  bool device_graphs = false;
  // kLowestCost (--device auto) with several providers: the training step is estimated
  // all on the CPU and all on the device (runtime/session.h), and the trainer becomes a
  // CPU trainer or a device one (preference order, as --device cuda) accordingly. A step
  // is never split node by node: parameters and their updates stay on one device.
  PartitionOptions::Policy placement = PartitionOptions::Policy::kPreferenceOrder;
  std::map<std::string, int64_t> dim_values;  // the batch's symbolic dims (DimValuesOf)
  // Data-parallel training (docs/DISTRIBUTED.md), when the group has more than one rank
  // (or one, with spec.all_reduce set: how a single GPU runs the NCCL path):
  // the training graph all-reduces the gradients (TrainingSpec::all_reduce), every rank
  // starts from rank 0's parameters, and the losses Step/TakeLosses return are the global
  // batch's (each rank's loss weighted by its share, summed). Not owned.
  Communicator* communicator = nullptr;
};

class Trainer {
 public:
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(const Graph& inference,
                                                         const TrainerOptions& options);
  // The training step's session as Create would build it, as a placement preview
  // (SessionOptions::placement_preview: plugin providers need no device; it cannot run):
  // where each node of the step would run and which copies it would make. `resident`:
  // the inputs a trainer uploads once and keeps on the device (parameters, optimizer
  // state, running statistics), whose Copy nodes then move nothing per step.
  struct StepPreview {
    std::unique_ptr<Session> session;
    std::set<std::string> resident;
  };
  static absl::StatusOr<StepPreview> PreviewStep(const Graph& inference, const TrainerOptions& options);

  // In data-parallel training, this rank's part of the global batch for the next steps:
  // its share (rows here / rows on all ranks) and the global index of its first row
  // (Dropout's masks); 1 and 0 otherwise.
  void set_batch_share(double share, int64_t first_row = 0) {
    share_ = share;
    first_row_ = first_row;
  }
  // The same from the rows of this rank's batch alone, when each rank brings a batch of
  // its own (the C API, Python): the ranks' row counts are summed (one small all-reduce),
  // the global batch being all of them in rank order. Nothing without data parallelism.
  absl::Status ShareLocalBatch(int64_t rows);
  // The group of a data-parallel trainer (more than one rank), else null.
  Communicator* communicator() const { return data_parallel() ? options_.communicator : nullptr; }
  // One optimizer step on a batch (inputs by name; `target` as the loss expects).
  // Returns the batch loss before the update (on a device: waits for the step to end).
  absl::StatusOr<double> Step(const std::map<std::string, Tensor>& inputs, const Tensor& target);
  // The same step without waiting for a device: its loss stays where it was computed
  // and TakeLosses returns the losses of every such step since the last call, in order
  // (one wait for all of them), so the host enqueues the next steps while the device
  // runs this one.
  absl::Status StepAsync(const std::map<std::string, Tensor>& inputs, const Tensor& target);
  absl::StatusOr<std::vector<double>> TakeLosses();
  // The model's outputs with the current weights, in inference mode (Dropout off).
  absl::StatusOr<std::vector<Tensor>> Predict(const std::map<std::string, Tensor>& inputs);

  // Parameters, optimizer state and step as a checkpoint (epoch and RNG state from the
  // caller), copied to the host.
  absl::StatusOr<Checkpoint> MakeCheckpoint(int64_t epochs_done, const std::string& rng_state) const;
  // Loads a checkpoint of this model: every parameter and state tensor must be present
  // with its shape and type; errors name the tensor.
  absl::Status RestoreCheckpoint(const Checkpoint& c);

  // The inference graph with the current weights as initializers (copied to the host).
  absl::StatusOr<Graph> ExportInference() const;
  // A tensor on the device the trainer keeps its state on (for uploading a dataset once).
  absl::StatusOr<Tensor> ToDevice(const Tensor& host) const { return train_session_->ToDevice(host); }
  // Every tensor of a host dataset (x, y and the other inputs) on that device.
  absl::StatusOr<Dataset> ToDevice(const Dataset& host) const;
  // A host copy of `t` wherever it lives (`t` itself when already on the host).
  absl::StatusOr<Tensor> ToHost(const Tensor& t) const { return train_session_->ToHost(t); }
  // "cpu", or the device provider's description.
  std::string device_description() const;
  int64_t steps_taken() const { return step_; }
  // The optimizer's base learning rate (the schedule scales it), and the rate the next
  // Step will use.
  void set_base_learning_rate(float lr) { options_.spec.optimizer.lr = lr; }
  float next_learning_rate() const;
  const std::vector<std::string>& parameter_names() const { return graph_.params; }
  // Live buffers (on the training device; see ToHostCopies for host copies). Replace
  // values, never entries: Step reads each entry through a pointer taken at Create.
  std::map<std::string, Tensor>& parameters() { return params_; }
  std::map<std::string, Tensor>& optimizer_state() { return state_; }
  void set_steps_taken(int64_t s) { step_ = s; }
  const TrainingGraph& training_graph() const { return graph_; }
  // The providers the trainer runs on (options.providers, or what kLowestCost chose) and,
  // for kLowestCost, the estimates it chose by.
  const std::vector<std::string>& providers() const { return options_.providers; }
  const PartitionResult& placement_estimates() const { return estimates_; }
  // The session that runs training steps (its stats, graph, profile, peak memory).
  Session& training_session() const { return *train_session_; }
  std::vector<StepProfile> profile() const { return train_session_->profile(); }
  std::vector<TraceEvent> trace() const { return train_session_->trace(); }
  void ResetProfile() { train_session_->ResetProfile(); }
  // Host copies of `from` (parameters or state), for tests and tools.
  absl::StatusOr<std::map<std::string, Tensor>> ToHostCopies(const std::map<std::string, Tensor>& from) const {
    return HostCopies(from);
  }

 private:
  Trainer() = default;
  absl::StatusOr<std::map<std::string, Tensor>> HostCopies(const std::map<std::string, Tensor>& from) const;
  absl::Status Upload(std::map<std::string, Tensor>& tensors) const;
  Graph inference_;
  TrainingGraph graph_;
  TrainerOptions options_;
  PartitionResult estimates_;
  // What Create and PreviewStep decide before building the step's session: the options
  // with the providers to train on (kLowestCost's choice), its estimates, the training
  // graph and the session options.
  struct StepSetup {
    TrainerOptions options;
    PartitionResult estimates;
    TrainingGraph graph;
    SessionOptions session;
  };
  static absl::StatusOr<StepSetup> SetUpStep(const Graph& inference, const Graph& inference_mode,
                                             const TrainerOptions& options);
  std::unique_ptr<Session> train_session_, eval_session_;
  std::map<std::string, Tensor> params_;  // name -> owned buffer, updated in place
  std::map<std::string, Tensor> state_;   // optimizer state and BatchNormalization running stats
  std::vector<const Tensor*> bound_inputs_;  // per training-graph input: its params_/state_ entry
  // Runs one step; returns its loss tensor where it was computed.
  absl::StatusOr<Tensor> RunStep(const std::map<std::string, Tensor>& inputs, const Tensor& target);
  std::vector<Tensor> pending_losses_;  // StepAsync's, until TakeLosses
  std::vector<double> pending_shares_;  // the batch share of each pending step
  bool data_parallel() const { return !graph_.grad_scale.empty(); }
  // The global batch's losses from this rank's (each times its share, summed over ranks).
  absl::Status ReduceLosses(std::vector<double>& losses, const std::vector<double>& shares) const;
  double share_ = 1;
  int64_t first_row_ = 0;
  // What a rank's loss and gradients count for in the global batch's: its share of a mean,
  // all of a sum (Reduction::kSum).
  double LossWeight(double share) const { return options_.spec.reduction == Reduction::kMean ? share : 1.0; }
  int64_t step_ = 0;
  Tensor step_feed_, lr_feed_, share_feed_, first_row_feed_;  // the scalars fed to each step, reused
};

}  // namespace tandem::training
