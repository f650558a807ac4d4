#include "cli/train_flags.h"

namespace tandem::cli {

const std::vector<std::string>& TrainSpecValueFlags() {
  static const std::vector<std::string> flags = {"--loss", "--reduction", "--optimizer", "--lr", "--momentum",
                                                 "--weight-decay", "--clip-norm", "--schedule", "--step-size",
                                                 "--gamma", "--warmup-steps", "--freeze"};
  return flags;
}

const std::vector<std::string>& TrainSpecBoolFlags() {
  static const std::vector<std::string> flags = {"--nesterov"};
  return flags;
}

absl::Status TrainSpecFromFlags(const Args& a, training::TrainerOptions* o) {
  training::TrainingSpec& spec = o->spec;
  auto loss = training::LossFromString(a.get("--loss", "mse"));
  if (!loss.ok()) return loss.status();
  spec.loss = *loss;
  const std::string reduction = a.get("--reduction", "mean");
  if (reduction != "mean" && reduction != "sum") return absl::InvalidArgumentError("--reduction must be mean or sum");
  spec.reduction = reduction == "sum" ? training::Reduction::kSum : training::Reduction::kMean;
  auto opt = training::OptimizerFromString(a.get("--optimizer", "adam"));
  if (!opt.ok()) return opt.status();
  spec.optimizer.kind = *opt;
  spec.optimizer.lr = static_cast<float>(a.get_double("--lr", 1e-3, DoubleRange{0, kMaxFloat, true, false}));
  spec.optimizer.momentum = static_cast<float>(a.get_double("--momentum", 0.9, DoubleRange{0, 1}));
  spec.optimizer.nesterov = a.has("--nesterov");
  spec.optimizer.weight_decay = static_cast<float>(a.get_double("--weight-decay", 0, DoubleRange{0, kMaxFloat}));
  spec.optimizer.clip_norm = static_cast<float>(a.get_double("--clip-norm", 0, DoubleRange{0, kMaxFloat}));
  spec.freeze = a.all("--freeze");
  auto sched = training::ScheduleFromString(a.get("--schedule", "constant"));
  if (!sched.ok()) return sched.status();
  o->schedule.kind = *sched;
  o->schedule.warmup_steps = a.get_int("--warmup-steps", 0, 0);
  o->schedule.step_size = a.get_int("--step-size", 1000, 1);
  o->schedule.gamma = static_cast<float>(a.get_double("--gamma", 0.1, DoubleRange{0, kMaxFloat, true, false}));
  return absl::OkStatus();
}

}  // namespace tandem::cli
