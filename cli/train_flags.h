// The training flags `tandem train` and `tandem profile --train` share: loss, optimizer,
// learning-rate schedule and frozen parameters -> TrainerOptions.
#pragma once
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/cli.h"
#include "training/trainer.h"

namespace tandem::cli {

// Flags that take a value, and those that take none, for Parse.
const std::vector<std::string>& TrainSpecValueFlags();
const std::vector<std::string>& TrainSpecBoolFlags();

// Fills o->spec (loss, reduction, optimizer, freeze) and o->schedule from the flags, with
// tandem train's defaults (mse, adam, lr 1e-3, constant schedule); names a bad value.
absl::Status TrainSpecFromFlags(const Args& a, training::TrainerOptions* o);

// The usage lines for these flags.
#define TANDEM_TRAIN_SPEC_HELP                                                                    \
  "  --loss NAME               mse | l1 | cross_entropy | nll | bce_with_logits (default mse);\n" \
  "                            cross_entropy takes logits, nll log-probabilities (a LogSoftmax\n" \
  "                            output), both with integer class labels\n"                          \
  "  --reduction mean|sum      how the loss combines samples (default mean)\n"                     \
  "  --optimizer NAME          sgd | momentum | adam | adamw (default adam)\n"                     \
  "  --lr X                    learning rate (default 1e-3)\n"                                     \
  "  --momentum X, --nesterov  for momentum\n"                                                     \
  "  --weight-decay X          L2 (sgd/momentum/adam) or decoupled (adamw)\n"                      \
  "  --clip-norm X             clip gradients by global norm\n"                                    \
  "  --schedule NAME           constant | step | cosine (default constant)\n"                      \
  "  --step-size N, --gamma X  step schedule: multiply the lr by X every N steps\n"                \
  "                            (default 1000, 0.1); cosine decays to 0 over the run\n"             \
  "  --warmup-steps N          linear learning-rate warm-up\n"                                     \
  "  --freeze NAME[*]          keep a parameter (or prefix*) fixed; repeatable\n"

#define TANDEM_DISTRIBUTED_HELP                                                                      \
  "  --distributed             data-parallel training across the processes a launcher started:\n" \
  "                            mpirun -n K tandem train ... --distributed (srun -n K under Slurm).\n" \
  "                            --batch-size stays the global batch; rank 0 prints and writes files.\n" \
  "                            With --device cuda each rank takes one GPU (its local rank) and the\n" \
  "                            gradients are summed with NCCL\n"

}  // namespace tandem::cli
