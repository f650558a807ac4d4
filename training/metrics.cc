#include "training/metrics.h"

#include <cmath>

namespace tandem::training {

absl::Status MetricAccumulator::Add(const Tensor& p, const Tensor& t) {
  if (p.rank() == 0 || t.rank() == 0 || p.dim(0) != t.dim(0))
    return absl::InvalidArgumentError("prediction " + DimsToString(p.dims()) + " and target " +
                                      DimsToString(t.dims()) + " disagree on the batch size");
  const int64_t n = p.dim(0);
  if (TakesClassLabels(kind_)) {
    const std::string name = LossName(kind_);
    if (p.rank() != 2) return absl::InvalidArgumentError(name + " metrics need [N, C] scores");
    if (t.rank() != 1 || (t.dtype() != DataType::kInt64 && t.dtype() != DataType::kInt32))
      return absl::InvalidArgumentError(name + " needs class labels: an int64 target of shape [" +
                                        std::to_string(n) + "], got " + DataTypeName(t.dtype()) +
                                        DimsToString(t.dims()));
    const int64_t c = p.dim(1);
    for (int64_t i = 0; i < n; ++i) {
      double mx = -INFINITY;
      int64_t arg = 0;
      for (int64_t j = 0; j < c; ++j) {
        double v = p.ElementAsDouble(i * c + j);
        if (v > mx) mx = v, arg = j;
      }
      int64_t label = t.ElementAsInt64(i);
      if (label < 0 || label >= c) return absl::InvalidArgumentError("label out of range");
      if (kind_ == LossKind::kNll) {  // p holds log-probabilities
        loss_sum_ -= p.ElementAsDouble(i * c + label);
      } else {
        double z = 0;
        for (int64_t j = 0; j < c; ++j) z += std::exp(p.ElementAsDouble(i * c + j) - mx);
        loss_sum_ += std::log(z) + mx - p.ElementAsDouble(i * c + label);
      }
      correct_ += arg == label;
    }
    samples_ += n;
    elements_ += n;
    return absl::OkStatus();
  }
  if (p.dims() != t.dims())
    return absl::InvalidArgumentError("the target has shape " + DimsToString(t.dims()) +
                                      ", the prediction " + DimsToString(p.dims()));
  for (int64_t i = 0; i < p.numel(); ++i) {
    double x = p.ElementAsDouble(i), y = t.ElementAsDouble(i);
    switch (kind_) {
      case LossKind::kMse: loss_sum_ += (x - y) * (x - y); break;
      case LossKind::kL1: loss_sum_ += std::fabs(x - y); break;
      case LossKind::kBceWithLogits:
        loss_sum_ += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::fabs(x)));
        correct_ += (x > 0) == (y > 0.5);
        break;
      default: break;
    }
  }
  samples_ += n;
  elements_ += p.numel();
  return absl::OkStatus();
}

Metrics MetricAccumulator::Result() const {
  Metrics m;
  m.samples = samples_;
  m.loss = elements_ ? loss_sum_ / static_cast<double>(elements_) : 0;
  if (TakesClassLabels(kind_)) m.accuracy = samples_ ? double(correct_) / samples_ : 0;
  if (kind_ == LossKind::kBceWithLogits) m.accuracy = elements_ ? double(correct_) / elements_ : 0;
  return m;
}

}  // namespace tandem::training
