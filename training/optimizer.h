// Optimizer configuration and the graph nodes that apply it. Each parameter gets one fused
// ai.tandem *Update node (kernels in providers/cpu/kernels/training/optimizer_ops.cc) that updates
// the parameter and its state tensors in place; the state lives next to the parameter, on
// its device, as graph inputs the trainer feeds from its own buffers.
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem::training {

enum class OptimizerKind { kSgd, kMomentum, kAdam, kAdamW };

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::kAdam;
  float lr = 1e-3f;
  float momentum = 0.9f;     // Momentum
  bool nesterov = false;     // Momentum
  float beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;  // Adam/AdamW
  float weight_decay = 0.f;  // L2 (SGD/Momentum/Adam) or decoupled (AdamW)
  float clip_norm = 0.f;     // > 0: clip gradients by their global norm first
};

absl::StatusOr<OptimizerKind> OptimizerFromString(const std::string& name);
const char* OptimizerName(OptimizerKind kind);
// Names of the per-parameter state tensors, e.g. {"m", "v"} for Adam.
std::vector<std::string> OptimizerStateSuffixes(OptimizerKind kind);

// Learning-rate schedules, evaluated on the host before each step.
struct LrSchedule {
  enum class Kind { kConstant, kStep, kCosine } kind = Kind::kConstant;
  int64_t step_size = 1000;  // kStep: multiply by gamma every step_size steps
  float gamma = 0.1f;
  int64_t total_steps = 0;   // kCosine: decay to min_lr over this many steps
  float min_lr = 0.f;
  int64_t warmup_steps = 0;  // linear warm-up from 0 over the first warmup_steps
};
absl::StatusOr<LrSchedule::Kind> ScheduleFromString(const std::string& name);
// Learning rate for 1-based step `step`.
float LearningRate(const OptimizerSpec& opt, const LrSchedule& schedule, int64_t step);

}  // namespace tandem::training
