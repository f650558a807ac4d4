#include "training/trainer.h"

namespace tandem::training {

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(const Graph& inference,
                                                         const TrainerOptions& options) {
  std::unique_ptr<Trainer> t(new Trainer());
  t->inference_ = inference;
  t->options_ = options;
  auto tg = BuildTrainingGraph(inference, options.spec);
  if (!tg.ok()) return tg.status();
  t->graph_ = std::move(*tg);
  for (const std::string& p : t->graph_.params) {
    t->params_[p] = inference.initializers.at(p).Clone();
    for (const std::string& s : t->graph_.state[p])
      t->state_[s] = Tensor::Host(t->params_[p].dtype(), t->params_[p].dims());  // zeros
  }
  SessionOptions so;
  so.num_threads = options.num_threads;
  auto train = Session::FromGraph(t->graph_.graph, so);
  if (!train.ok()) return train.status();
  t->train_session_ = std::move(*train);

  // The inference graph reads the same parameter buffers as inputs.
  Graph eval = inference;
  for (const std::string& p : t->graph_.params) {
    const Tensor& w = eval.initializers.at(p);
    eval.inputs.push_back(ValueInfo{p, w.dtype(), Shape::Of(w.dims())});
    eval.initializers.erase(p);
  }
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
  step_ = next;
  return (*out)[0].ElementAsDouble(0);
}

absl::StatusOr<std::vector<Tensor>> Trainer::Predict(const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Tensor> feeds = inputs;
  for (const auto& [name, t] : params_) feeds[name] = t;
  return eval_session_->Run(feeds);
}

Graph Trainer::ExportInference() const {
  Graph g = inference_;
  for (const auto& [name, t] : params_) g.initializers[name] = t.Clone();
  return g;
}

}  // namespace tandem::training
