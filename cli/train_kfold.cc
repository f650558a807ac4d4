#include "cli/train_kfold.h"

#include <chrono>
#include <cmath>
#include <cstdio>

#include "training/kfold.h"
#include "training/metrics.h"

namespace tandem::cli {

namespace {
int Fail(const absl::Status& s) {
  std::fprintf(stderr, "error: --k-fold: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int RunKFold(training::Trainer& t, const std::string& input, const training::Dataset& data,
             training::LossKind loss, const KFoldOptions& o) {
  auto folds = training::MakeFolds(data.size(), o.k);
  if (!folds.ok()) return Fail(folds.status());
  std::mt19937_64 rng(o.seed);
  training::Dataset rows = data;
  if (o.shuffle) rows = training::Gather(data, training::Permutation(data.size(), rng));
  const training::Dataset host = training::DoubleRows(rows);  // targets for the metrics
  auto resident = t.ToDevice(host);                             // the only upload
  if (!resident.ok()) return Fail(resident.status());
  auto initial = t.MakeCheckpoint(0, "");  // each fold starts from here
  if (!initial.ok()) return Fail(initial.status());
  if (!o.quiet)
    std::printf("k-fold: %lld folds of %lld samples, data uploaded once (%.2f MiB, rows laid out twice) to %s\n",
                static_cast<long long>(o.k), static_cast<long long>(data.size()),
                (host.x.bytes() + host.y.bytes()) / 1048576.0, t.device_description().c_str());
  std::vector<double> losses, accuracies;
  const auto start = std::chrono::steady_clock::now();
  for (size_t f = 0; f < folds->size(); ++f) {
    const training::Fold& fold = (*folds)[f];
    if (auto s = t.RestoreCheckpoint(*initial); !s.ok()) return Fail(s);
    double last = 0;
    for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
      for (const training::RowRange& b :
           training::Batches(fold.training, o.batch_size, o.drop_last, o.shuffle ? &rng : nullptr)) {
        const training::Dataset batch = training::RowsView(*resident, b);
        auto l = t.Step(batch.Inputs(input), batch.y);
        if (!l.ok()) return Fail(l.status());
        if (!std::isfinite(*l))
          return Fail(absl::InternalError("fold " + std::to_string(f + 1) + ": the loss became " + std::to_string(*l)));
        last = *l;
      }
    }
    training::MetricAccumulator acc(loss);
    for (const training::RowRange& b : training::Batches(fold.validation, std::max<int64_t>(o.batch_size, 256), false)) {
      auto out = t.Predict(training::RowsView(*resident, b).Inputs(input));
      if (!out.ok()) return Fail(out.status());
      if (auto s = acc.Add((*out)[0], host.y.Rows(b.begin, b.end)); !s.ok()) return Fail(s);
    }
    const training::Metrics m = acc.Result();
    losses.push_back(m.loss);
    if (m.accuracy >= 0) accuracies.push_back(m.accuracy);
    std::printf("fold %zu/%lld: trained on %lld samples (%lld epochs, last batch loss %.6g), validated on %lld: "
                "val_loss %.8g",
                f + 1, static_cast<long long>(o.k), static_cast<long long>(fold.training.size()),
                static_cast<long long>(o.epochs), last, static_cast<long long>(fold.validation.size()), m.loss);
    if (m.accuracy >= 0) std::printf(" val_accuracy %.4f", m.accuracy);
    std::printf("\n");
    std::fflush(stdout);
  }
  auto stats = [](const std::vector<double>& v) {
    double mean = 0, var = 0;
    for (double x : v) mean += x / v.size();
    for (double x : v) var += (x - mean) * (x - mean) / std::max<size_t>(1, v.size() - 1);
    return std::make_pair(mean, std::sqrt(var));
  };
  const auto [mean, sd] = stats(losses);
  std::printf("k-fold: val_loss mean %.6g, std %.3g over %zu folds", mean, sd, losses.size());
  if (!accuracies.empty()) {
    const auto [am, asd] = stats(accuracies);
    std::printf("; val_accuracy mean %.4f, std %.3f", am, asd);
  }
  std::printf(" (%.1f s)\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

}  // namespace tandem::cli
