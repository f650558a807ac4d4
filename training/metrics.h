// Host-side evaluation metrics computed from model outputs (validation during training).
#pragma once
#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "training/losses.h"

namespace tandem::training {

struct Metrics {
  double loss = 0;       // the training loss, mean over samples
  double accuracy = -1;  // classification only (cross_entropy / bce_with_logits), else -1
  int64_t samples = 0;
};

// Accumulates metrics over batches of (prediction, target).
class MetricAccumulator {
 public:
  explicit MetricAccumulator(LossKind kind) : kind_(kind) {}
  absl::Status Add(const Tensor& prediction, const Tensor& target);
  Metrics Result() const;

 private:
  LossKind kind_;
  double loss_sum_ = 0;
  int64_t correct_ = 0, samples_ = 0, elements_ = 0;
};

}  // namespace tandem::training
