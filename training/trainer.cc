#include "training/trainer.h"

namespace tandem::training {

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(const Graph& inference,
                                                         const TrainerOptions& options) {
  std::unique_ptr<Trainer> t(new Trainer());
  t->inference_ = InferenceMode(inference);
  t->options_ = options;
  auto tg = BuildTrainingGraph(inference, options.spec);
  if (!tg.ok()) return tg.status();
  t->graph_ = std::move(*tg);
  for (const auto& [stat, updated] : t->graph_.running_stats)
    t->state_[stat] = inference.initializers.at(stat).Clone();
  for (const std::string& p : t->graph_.params) {
    t->params_[p] = inference.initializers.at(p).Clone();
    for (const std::string& s : t->graph_.state[p])
      t->state_[s] = Tensor::Host(t->params_[p].dtype(), t->params_[p].dims());  // zeros
  }
  SessionOptions so;
  so.num_threads = options.num_threads;
  so.profiling = options.profiling;
  auto train = Session::FromGraph(t->graph_.graph, so);
  if (!train.ok()) return train.status();
  t->train_session_ = std::move(*train);

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

absl::StatusOr<double> Trainer::Step(const std::map<std::string, Tensor>& inputs,
                                     const Tensor& target) {
  std::map<std::string, Tensor> feeds = inputs;
  feeds[graph_.target] = target;
  for (const auto& [name, t] : params_) feeds[name] = t;
  for (const auto& [name, t] : state_) feeds[name] = t;
  int64_t next = step_ + 1;
  feeds[graph_.step] = Tensor::Scalar<int64_t>(next);
  feeds[graph_.lr] = Tensor::Scalar<float>(LearningRate(options_.spec.optimizer, options_.schedule, next));
  auto out = train_session_->Run(feeds);
  if (!out.ok()) return out.status();
  for (size_t k = 0; k < graph_.running_stats.size(); ++k)
    state_[graph_.running_stats[k].first] = (*out)[1 + k];
  step_ = next;
  return (*out)[0].ElementAsDouble(0);
}

absl::StatusOr<std::vector<Tensor>> Trainer::Predict(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> feeds = inputs;
  for (const auto& [name, t] : params_) feeds[name] = t;
  for (const auto& [stat, updated] : graph_.running_stats) feeds[stat] = state_.at(stat);
  return eval_session_->Run(feeds);
}

Checkpoint Trainer::MakeCheckpoint(int64_t epochs_done, const std::string& rng_state) const {
  Checkpoint c;
  c.step = step_;
  c.epoch = epochs_done;
  c.rng_state = rng_state;
  c.params = params_;
  c.state = state_;
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
  absl::Status s = restore(params_, c.params, "parameter");
  if (s.ok()) s = restore(state_, c.state, "optimizer state");
  if (s.ok()) step_ = c.step;
  return s;
}

Graph Trainer::ExportInference() const {
  Graph g = inference_;
  for (const auto& [name, t] : params_) g.initializers[name] = t.Clone();
  for (const auto& [stat, updated] : graph_.running_stats) g.initializers[stat] = state_.at(stat).Clone();
  return g;
}

}  // namespace tandem::training
