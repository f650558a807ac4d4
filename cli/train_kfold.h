// tandem train --k-fold K: K-fold cross-validation with the data uploaded to the training
// device once (training/kfold.h): one trainer, reset to the model's initial weights and a
// fresh optimizer state before each fold.
#pragma once
#include <cstdint>
#include <string>

#include "training/data.h"
#include "training/trainer.h"

namespace tandem::cli {

struct KFoldOptions {
  int64_t k = 5, epochs = 1, batch_size = 32;
  uint64_t seed = 0;
  bool shuffle = true;    // the rows once before the folds are cut, the batch order every epoch
  bool drop_last = false;
  bool quiet = false;
};

// Trains `t` (as created, untrained) on every fold of `data` and prints each fold's
// validation loss (and accuracy for classification) and their mean and spread.
// `input` names the model input x feeds. Returns the process exit status.
int RunKFold(training::Trainer& t, const std::string& input, const training::Dataset& data,
             training::LossKind loss, const KFoldOptions& o);

}  // namespace tandem::cli
