#include "training/trainer.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>

namespace tandem::training {

namespace {
// The inputs a trainer uploads once and keeps on its device: parameters, optimizer state
// and running statistics.
std::set<std::string> ResidentInputs(const TrainingGraph& tg) {
  std::set<std::string> resident(tg.params.begin(), tg.params.end());
  for (const auto& [param, names] : tg.state) resident.insert(names.begin(), names.end());
  for (const auto& [stat, updated] : tg.running_stats) resident.insert(stat);
  return resident;
}

// The training step as a device would run it (no CPU-only fusions), estimated all on the
// CPU and all on the first provider: the providers to train with ({"cpu"} when the CPU's
// total is lower; ties keep the user's order) and the estimates.
absl::StatusOr<std::pair<std::vector<std::string>, PartitionResult>> ChooseByCost(const Graph& inference,
                                                                                  const TrainerOptions& options) {
  TrainingSpec spec = options.spec;
  spec.cpu_fusions = spec.one_update_node = false;
  auto tg = BuildTrainingGraph(inference, spec);
  if (!tg.ok()) return tg.status();
  SessionOptions so;
  so.num_threads = options.num_threads;
  so.fusion = options.fusion;
  so.providers = options.providers;
  so.provider_options = options.provider_options;
  so.placement = PartitionOptions::Policy::kLowestCost;
  so.dim_values = options.dim_values;
  so.resident_inputs = ResidentInputs(*tg);  // uploaded once
  so.outputs_on_host = false;
  auto trial = Session::FromGraph(std::move(tg->graph), so);
  if (!trial.ok()) return trial.status();
  const PartitionResult& e = (*trial)->stats().placement;
  auto total = [&e](const std::string& provider) {
    for (const auto& [name, us] : e.candidates)
      if (name == "all on " + provider) return us;
    return std::numeric_limits<double>::infinity();
  };
  const bool cpu = total("cpu") < total(options.providers.front());
  return std::make_pair(cpu ? std::vector<std::string>{"cpu"} : options.providers, e);
}
}  // namespace

absl::StatusOr<Trainer::StepSetup> Trainer::SetUpStep(const Graph& inference, const Graph& inference_mode,
                                                      const TrainerOptions& options) {
  StepSetup setup;
  setup.options = options;
  if (options.placement == PartitionOptions::Policy::kLowestCost && options.providers.size() > 1) {
    auto chosen = ChooseByCost(inference_mode, options);
    if (!chosen.ok()) return chosen.status();
    setup.options.providers = chosen->first;
    setup.estimates = std::move(chosen->second);
  }
  setup.options.placement = PartitionOptions::Policy::kPreferenceOrder;
  TrainingSpec spec = options.spec;
  spec.cpu_fusions = options.fusion && std::all_of(setup.options.providers.begin(), setup.options.providers.end(),
                                                         [](const std::string& p) { return p == "cpu"; });
  spec.one_update_node = spec.cpu_fusions;  // the same condition: fusion on, CPU only
  spec.all_reduce = options.communicator && (options.communicator->size() > 1 || options.spec.all_reduce);
  auto tg = BuildTrainingGraph(inference, spec);
  if (!tg.ok()) return tg.status();
  setup.graph = std::move(*tg);
  SessionOptions& so = setup.session;
  so.num_threads = options.num_threads;
  so.profiling = options.profiling;
  so.tracing = options.tracing;
  so.fusion = options.fusion;
  so.providers = setup.options.providers;
  so.provider_options = options.provider_options;
  so.device_graphs = options.device_graphs;
  so.outputs_on_host = false;  // loss and running stats stay where they were computed
  return setup;
}

absl::StatusOr<Trainer::StepPreview> Trainer::PreviewStep(const Graph& inference, const TrainerOptions& options) {
  auto setup = SetUpStep(inference, InferenceMode(inference), options);
  if (!setup.ok()) return setup.status();
  StepPreview preview;
  preview.resident = ResidentInputs(setup->graph);
  setup->session.placement_preview = true;
  auto session = Session::FromGraph(std::move(setup->graph.graph), setup->session);
  if (!session.ok()) return session.status();
  preview.session = std::move(*session);
  return preview;
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(const Graph& inference,
                                                         const TrainerOptions& options) {
  std::unique_ptr<Trainer> t(new Trainer());
  t->inference_ = InferenceMode(inference);
  auto setup = SetUpStep(inference, t->inference_, options);
  if (!setup.ok()) return setup.status();
  t->options_ = std::move(setup->options);
  t->estimates_ = std::move(setup->estimates);
  t->graph_ = std::move(setup->graph);
  for (const auto& [stat, updated] : t->graph_.running_stats)
    t->state_[stat] = inference.initializers.at(stat).Clone();
  for (const std::string& p : t->graph_.params) {
    t->params_[p] = inference.initializers.at(p).Clone();
    for (const std::string& s : t->graph_.state[p])
      t->state_[s] = Tensor::Host(t->params_[p].dtype(), t->params_[p].dims());  // zeros
  }
  if (t->data_parallel()) {  // every rank starts from rank 0's weights (and running statistics)
    for (auto* tensors : {&t->params_, &t->state_})
      for (auto& [name, tensor] : *tensors) {
        absl::Status st = options.communicator->Broadcast(tensor.raw(), static_cast<int64_t>(tensor.bytes()), 0);
        if (!st.ok()) return st;
      }
  }
  SessionOptions so = setup->session;
  auto train = Session::FromGraph(t->graph_.graph, so);
  if (!train.ok()) return train.status();
  t->train_session_ = std::move(*train);
  // Where each training-graph input comes from (parameters and state by pointer: map
  // nodes stay put while their values are replaced).
  for (const ValueInfo& vi : t->train_session_->inputs()) {
    const Tensor* bound = nullptr;
    if (auto p = t->params_.find(vi.name); p != t->params_.end()) bound = &p->second;
    if (auto st = t->state_.find(vi.name); st != t->state_.end()) bound = &st->second;
    t->bound_inputs_.push_back(bound);
  }
  so.outputs_on_host = true;
  for (auto* tensors : {&t->params_, &t->state_}) {
    absl::Status up = t->Upload(*tensors);
    if (!up.ok()) return up;
  }

  // The inference graph reads the same parameter buffers as inputs.
  Graph eval = t->inference_;
  std::vector<std::string> fed = t->graph_.params;
  for (const auto& [stat, updated] : t->graph_.running_stats) fed.push_back(stat);
  for (const std::string& p : fed) {
    const Tensor& w = eval.initializers.at(p);
    eval.inputs.push_back(ValueInfo{p, w.dtype(), Shape::Of(w.dims())});
    eval.initializers.erase(p);
  }
  so.profiling = false;
  auto eval_session = Session::FromGraph(std::move(eval), so);
  if (!eval_session.ok()) return eval_session.status();
  t->eval_session_ = std::move(*eval_session);
  return t;
}

absl::StatusOr<Dataset> Trainer::ToDevice(const Dataset& host) const {
  Dataset out;
  for (auto [from, to] : {std::make_pair(&host.x, &out.x), std::make_pair(&host.y, &out.y)}) {
    auto up = ToDevice(*from);
    if (!up.ok()) return up.status();
    *to = std::move(*up);
  }
  for (const auto& [name, t] : host.more) {
    auto up = ToDevice(t);
    if (!up.ok()) return up.status();
    out.more[name] = std::move(*up);
  }
  return out;
}

namespace {

// `held` set to a scalar `value`: rewritten in place while nothing else holds its buffer
// (the previous step's feed, released when that run ended), else a fresh scalar.
template <typename T>
const Tensor& RefillScalar(Tensor& held, T value) {
  if (held.dtype() == DataTypeOf<T>::value && held.buffer() && held.buffer().use_count() == 1)
    *held.data<T>() = value;
  else
    held = Tensor::Scalar<T>(value);
  return held;
}

}  // namespace

absl::StatusOr<double> Trainer::Step(const std::map<std::string, Tensor>& inputs, const Tensor& target) {
  auto loss = RunStep(inputs, target);
  if (!loss.ok()) return loss.status();
  auto host = train_session_->ToHost(*loss);
  if (!host.ok()) return host.status();
  std::vector<double> losses = {host->ElementAsDouble(0)};
  if (absl::Status st = ReduceLosses(losses, {share_}); !st.ok()) return st;
  return losses[0];
}

absl::Status Trainer::ShareLocalBatch(int64_t rows) {
  if (!data_parallel()) return absl::OkStatus();
  Communicator* comm = options_.communicator;
  std::vector<double> counts(static_cast<size_t>(comm->size()), 0.0);
  counts[static_cast<size_t>(comm->rank())] = static_cast<double>(rows);
  if (absl::Status st = comm->AllReduceSum(counts.data(), static_cast<int64_t>(counts.size())); !st.ok()) return st;
  double total = 0, before = 0;
  for (int r = 0; r < comm->size(); ++r) {
    total += counts[static_cast<size_t>(r)];
    if (r < comm->rank()) before += counts[static_cast<size_t>(r)];
  }
  if (total <= 0) return absl::InvalidArgumentError("[train] every rank's batch is empty");
  set_batch_share(static_cast<double>(rows) / total, static_cast<int64_t>(before));
  return absl::OkStatus();
}

absl::Status Trainer::ReduceLosses(std::vector<double>& losses, const std::vector<double>& shares) const {
  if (!data_parallel() || losses.empty()) return absl::OkStatus();
  for (size_t i = 0; i < losses.size(); ++i) losses[i] *= LossWeight(shares[i]);
  return options_.communicator->AllReduceSum(losses.data(), static_cast<int64_t>(losses.size()));
}

absl::Status Trainer::StepAsync(const std::map<std::string, Tensor>& inputs, const Tensor& target) {
  auto loss = RunStep(inputs, target);
  if (!loss.ok()) return loss.status();
  pending_losses_.push_back(std::move(*loss));
  pending_shares_.push_back(share_);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> Trainer::TakeLosses() {
  std::vector<double> losses;
  for (const Tensor& t : pending_losses_) {  // the first copy waits for the device, the rest are done
    auto host = train_session_->ToHost(t);
    if (!host.ok()) return host.status();
    losses.push_back(host->ElementAsDouble(0));
  }
  pending_losses_.clear();
  if (absl::Status st = ReduceLosses(losses, pending_shares_); !st.ok()) return st;
  pending_shares_.clear();
  return losses;
}

absl::StatusOr<Tensor> Trainer::RunStep(const std::map<std::string, Tensor>& inputs, const Tensor& target) {
  const std::vector<ValueInfo>& want = train_session_->inputs();
  std::vector<Tensor> feeds(want.size());
  int64_t next = step_ + 1;
  size_t used = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& name = want[i].name;
    if (bound_inputs_[i]) feeds[i] = *bound_inputs_[i];
    else if (name == graph_.target) feeds[i] = target;
    else if (name == graph_.step) feeds[i] = RefillScalar(step_feed_, next);
    else if (name == graph_.lr) feeds[i] = RefillScalar(lr_feed_, next_learning_rate());
    else if (data_parallel() && name == graph_.grad_scale) feeds[i] = RefillScalar(share_feed_, static_cast<float>(LossWeight(share_)));
    else if (data_parallel() && name == graph_.first_row) feeds[i] = RefillScalar(first_row_feed_, first_row_);
    else if (auto it = inputs.find(name); it != inputs.end()) feeds[i] = it->second, ++used;
  }
  if (used != inputs.size())  // some name the model does not have: say which
    for (const auto& entry : inputs) {
      const std::string& name = entry.first;
      if (!std::any_of(want.begin(), want.end(), [&](const ValueInfo& vi) { return vi.name == name; }))
        return absl::NotFoundError("[run] the model has no input named '" + name + "'");
    }
  auto out = train_session_->RunInOrder(std::move(feeds));
  if (!out.ok()) return out.status();
  for (size_t k = 0; k < graph_.running_stats.size(); ++k)
    state_[graph_.running_stats[k].first] = (*out)[1 + k];
  step_ = next;
  return (*out)[0];
}

float Trainer::next_learning_rate() const {
  return LearningRate(options_.spec.optimizer, options_.schedule, step_ + 1);
}

absl::StatusOr<std::vector<Tensor>> Trainer::Predict(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> feeds = inputs;
  for (const auto& [name, t] : params_) feeds[name] = t;
  for (const auto& [stat, updated] : graph_.running_stats) feeds[stat] = state_.at(stat);
  // The eval session has providers of its own and reads the parameters the training
  // step updates in place: the step's device work must be over before it reads them
  // (steps wait only when a loss is read back), and its own before the next step writes
  // them again. (The CUDA provider's sessions share one stream, which orders them
  // anyway; another device provider need not.)
  if (absl::Status s = train_session_->Synchronize(); !s.ok()) return s;
  auto out = eval_session_->Run(feeds);
  if (absl::Status s = eval_session_->Synchronize(); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::map<std::string, Tensor>> Trainer::HostCopies(
    const std::map<std::string, Tensor>& from) const {
  std::map<std::string, Tensor> out;
  for (const auto& [name, t] : from) {
    auto h = train_session_->ToHost(t);
    if (!h.ok()) return h.status();
    out[name] = h->device() == t.device() && h->raw() == t.raw() ? h->Clone() : std::move(*h);
  }
  return out;
}

absl::Status Trainer::Upload(std::map<std::string, Tensor>& tensors) const {
  for (auto& [name, t] : tensors) {
    auto d = train_session_->ToDevice(t);
    if (!d.ok()) return absl::Status(d.status().code(), "[train] uploading '" + name + "': " +
                                                            std::string(d.status().message()));
    t = std::move(*d);
  }
  return absl::OkStatus();
}

std::string Trainer::device_description() const {
  const ExecutionProvider& p = train_session_->primary_provider();
  return p.device().type == DeviceType::kCpu ? "cpu" : p.description();
}

absl::StatusOr<Checkpoint> Trainer::MakeCheckpoint(int64_t epochs_done,
                                                   const std::string& rng_state) const {
  Checkpoint c;
  c.step = step_;
  c.epoch = epochs_done;
  c.rng_state = rng_state;
  auto params = HostCopies(params_);
  if (!params.ok()) return params.status();
  auto state = HostCopies(state_);
  if (!state.ok()) return state.status();
  c.params = std::move(*params);
  c.state = std::move(*state);
  return c;
}

absl::Status Trainer::RestoreCheckpoint(const Checkpoint& c) {
  auto restore = [](std::map<std::string, Tensor>& into, const std::map<std::string, Tensor>& from,
                    const char* what) -> absl::Status {
    if (from.size() != into.size())
      return absl::InvalidArgumentError(std::string("[checkpoint] holds ") + std::to_string(from.size()) +
                                        " " + what + " tensors, the model has " + std::to_string(into.size()));
    for (auto& [name, t] : into) {
      auto it = from.find(name);
      if (it == from.end())
        return absl::InvalidArgumentError(std::string("[checkpoint] has no ") + what + " tensor '" + name + "'");
      if (it->second.dtype() != t.dtype() || it->second.dims() != t.dims())
        return absl::InvalidArgumentError("[checkpoint] tensor '" + name + "' is " +
                                          DataTypeName(it->second.dtype()) + DimsToString(it->second.dims()) +
                                          ", the model needs " + DataTypeName(t.dtype()) + DimsToString(t.dims()));
    }
    for (auto& [name, t] : into) t = from.at(name).Clone();
    return absl::OkStatus();
  };
  // Checked and cloned on the host first, then uploaded: a bad checkpoint changes nothing.
  std::map<std::string, Tensor> params = params_, state = state_;
  absl::Status s = restore(params, c.params, "parameter");
  if (s.ok()) s = restore(state, c.state, "optimizer state");
  if (s.ok()) s = Upload(params);
  if (s.ok()) s = Upload(state);
  if (!s.ok()) return s;
  // Value by value: the map nodes stay (bound_inputs_ points at them).
  for (auto& [name, t] : params) params_.at(name) = std::move(t);
  for (auto& [name, t] : state) state_.at(name) = std::move(t);
  step_ = c.step;
  return s;
}

absl::StatusOr<Graph> Trainer::ExportInference() const {
  Graph g = inference_;
  auto params = HostCopies(params_);
  if (!params.ok()) return params.status();
  auto state = HostCopies(state_);
  if (!state.ok()) return state.status();
  for (auto& [name, t] : *params) g.initializers[name] = std::move(t);
  for (const auto& [stat, updated] : graph_.running_stats) g.initializers[stat] = state->at(stat);
  return g;
}

}  // namespace tandem::training
