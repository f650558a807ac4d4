#include "training/optimizer.h"

#include <cmath>

namespace tandem::training {

absl::StatusOr<OptimizerKind> OptimizerFromString(const std::string& name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "momentum") return OptimizerKind::kMomentum;
  if (name == "adam") return OptimizerKind::kAdam;
  if (name == "adamw") return OptimizerKind::kAdamW;
  return absl::InvalidArgumentError("unknown optimizer '" + name + "' (sgd, momentum, adam, adamw)");
}

const char* OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdamW: return "adamw";
  }
  return "?";
}

std::vector<std::string> OptimizerStateSuffixes(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return {};
    case OptimizerKind::kMomentum: return {"velocity"};
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW: return {"m", "v"};
  }
  return {};
}

absl::StatusOr<LrSchedule::Kind> ScheduleFromString(const std::string& name) {
  if (name == "constant") return LrSchedule::Kind::kConstant;
  if (name == "step") return LrSchedule::Kind::kStep;
  if (name == "cosine") return LrSchedule::Kind::kCosine;
  return absl::InvalidArgumentError("unknown schedule '" + name + "' (constant, step, cosine)");
}

float LearningRate(const OptimizerSpec& opt, const LrSchedule& s, int64_t step) {
  double lr = opt.lr;
  int64_t t = step - 1;  // steps already taken
  switch (s.kind) {
    case LrSchedule::Kind::kConstant: break;
    case LrSchedule::Kind::kStep:
      lr *= std::pow(s.gamma, static_cast<double>(t / std::max<int64_t>(1, s.step_size)));
      break;
    case LrSchedule::Kind::kCosine: {
      double total = static_cast<double>(std::max<int64_t>(1, s.total_steps));
      double progress = std::min(1.0, static_cast<double>(t) / total);
      lr = s.min_lr + 0.5 * (opt.lr - s.min_lr) * (1 + std::cos(M_PI * progress));
      break;
    }
  }
  if (s.warmup_steps > 0 && step <= s.warmup_steps)
    lr *= static_cast<double>(step) / static_cast<double>(s.warmup_steps);
  return static_cast<float>(lr);
}

}  // namespace tandem::training
