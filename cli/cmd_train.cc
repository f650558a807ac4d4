// tandem train: fit a model to data with a loss and an optimizer, report progress,
// validation metrics and the loss history, export the trained model.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/cli.h"
#include "cli/lib/run_inputs.h"
#include "cli/loss_plot.h"
#include "cli/train_flags.h"
#include "cli/train_kfold.h"
#include "onnx_import/export.h"
#include "onnx_import/import.h"
#include "runtime/trace.h"
#include "training/data.h"
#include "training/data_parallel.h"
#include "training/kfold.h"
#include "training/metrics.h"
#include "training/resident_batches.h"
#include "training/trainer.h"

namespace tandem::cli {

namespace {
const char kUsage[] =
    "usage: tandem train MODEL.onnx DATA [options]\n"
    "\n"
    "Trains MODEL on DATA and reports loss, throughput and ETA per epoch.\n"
    "\n"
    "data (one of):\n"
    "  --x X.npy --y Y.npy       inputs and targets as NumPy arrays (row i = sample i)\n"
    "  --input NAME=X.npy ... --y Y.npy  one array per model input (models with several)\n"
    "  --csv FILE                numeric CSV; the last column is the label\n"
    "  --fashion-mnist [DIR]     Fashion-MNIST IDX files (default /usr/share/datasets/fashion-mnist);\n"
    "                            validates on its t10k test set unless --val-split is given\n"
    "training:\n"
    TANDEM_TRAIN_SPEC_HELP
    "  --epochs N                (default 1)\n"
    "  --batch-size N            (default 32; the dataset size means full batch)\n"
    "  --seed N                  shuffling, split and Dropout seed (default 0)\n"
    "  --no-shuffle, --drop-last\n"
    "  --val-split F             hold out this fraction of the data for validation\n"
    "  --val-x X.npy --val-y Y.npy  a separate validation set (--val-input NAME=X.npy ...\n"
    "                            for models with several inputs)\n"
    "  --k-fold K                K-fold cross-validation: K models from the same start, each\n"
    "                            validated on its own 1/K of the data; prints each fold's\n"
    "                            validation loss and their mean. The data is uploaded once\n"
    "                            and every batch is a view of it (no copies per step)\n"
    "  --threads N               (default: all cores)\n"
    "  --device cpu|cuda|auto    (default auto: with a GPU visible, the device whose estimated\n"
    "                            step time is lower for this model and batch size; on the GPU\n"
    "                            parameters, optimizer state and data stay there for the run)\n"
    TANDEM_DISTRIBUTED_HELP
    "output:\n"
    "  --history FILE.csv        per-epoch loss history (also drawn as FILE.svg)\n"
    "  --step-log FILE.csv       the loss of every step (before its update)\n"
    "  --export FILE.onnx        the trained model as a standard ONNX inference model\n"
    "  --checkpoint-dir DIR      write DIR/checkpoint.tdm after every epoch (atomically); a NaN/Inf\n"
    "                            loss or weight or a failed write stops training (exit status 1)\n"
    "                            and keeps the last good checkpoint\n"
    "  --resume                  continue from DIR/checkpoint.tdm (same data, seed and options)\n"
    "  --quiet                   only the final summary\n"
    "  --trace FILE.json         Chrome trace of the training steps after the first\n"
    "  --profile                 per-node time table of the training graph at the end (over\n"
    "                            the steps after the first, which builds the primitives)\n"
    "  --no-fusion               keep layers and activations as separate nodes (for comparison)\n"
    TANDEM_PRECISION_HELP
    TANDEM_CUDA_GRAPH_HELP
    TANDEM_LIMITS_HELP;

// The most dataset bytes `train` keeps on a device (more is gathered on the host per batch).
constexpr int64_t kResidentCap = int64_t{2} << 30;
// Steps whose losses `train` leaves on the device before it reads them back (one wait).
constexpr int64_t kLossWindow = 16;

struct Options {
  training::TrainerOptions trainer;
  int64_t epochs = 1, batch_size = 32;
  uint64_t seed = 0;
  bool shuffle = true, drop_last = false, quiet = false;
  double val_split = 0;
};

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
  return 1;
}

std::string Duration(double seconds) {
  char buf[32];
  if (seconds < 60) std::snprintf(buf, sizeof buf, "%.1fs", seconds);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", int(seconds) / 60, int(seconds) % 60);
  return buf;
}

// The validation metrics of `data` (in data-parallel training: this rank's share of the
// validation set, reduced over the ranks).
absl::StatusOr<training::Metrics> Evaluate(training::Trainer& t, const std::string& input,
                                           const training::Dataset& data, int64_t batch,
                                           training::LossKind kind, Communicator* comm) {
  training::MetricAccumulator acc(kind);
  if (data.size() > 0) {
    training::BatchIterator it(data, batch, /*shuffle=*/false);
    while (const training::Dataset* b = it.Next()) {
      auto out = t.Predict(b->Inputs(input));
      if (!out.ok()) return out.status();
      auto s = acc.Add((*out)[0], b->y);
      if (!s.ok()) return s;
    }
  }
  return training::ReduceMetrics(acc.Result(), comm);
}
}  // namespace

int Train(int argc, char** argv) {
  std::vector<std::string> value_flags = {"--x", "--y", "--input", "--val-input", "--val-y", "--csv", "--val-x",
                                         "--epochs", "--batch-size", "--seed", "--val-split", "--threads",
                                         "--device", "--history", "--step-log", "--export", "--checkpoint-dir",
                                         "--trace", "--k-fold", "--precision"};
  std::vector<std::string> bool_flags = {"--no-shuffle", "--drop-last", "--quiet", "--fashion-mnist", "--profile",
                                         "--resume", "--no-fusion", "--no-cuda-graph", "--distributed"};
  value_flags.insert(value_flags.end(), TrainSpecValueFlags().begin(), TrainSpecValueFlags().end());
  bool_flags.insert(bool_flags.end(), TrainSpecBoolFlags().begin(), TrainSpecBoolFlags().end());
  Args a = Parse(argc, argv, value_flags, bool_flags, kUsage);
  if (a.positional.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // Past a file-size limit (ulimit -f) a write then fails with EFBIG and is reported like
  // a full disk, instead of SIGXFSZ killing the process in the middle of a checkpoint.
  std::signal(SIGXFSZ, SIG_IGN);
  if (const int launched = LaunchedWorldSize(); launched > 1 && !a.has("--distributed"))
    return Fail(absl::FailedPreconditionError(
        "this process is one of " + std::to_string(launched) +
        " a launcher started, but without --distributed each would train its own copy of the model: add "
        "--distributed to train one model data-parallel, or start a single process"));
  auto dist = training::JoinDataParallel(a.has("--distributed"));
  if (!dist.ok()) return Fail(dist.status());
  // Rank 0 alone prints progress and writes the history, checkpoints and exports.
  const bool lead = dist->lead();
  if (!lead && !std::freopen("/dev/null", "w", stdout)) return Fail(absl::InternalError("cannot silence stdout"));
  Options o;
  o.trainer.communicator = dist->comm;
  auto& spec = o.trainer.spec;
  if (auto s = TrainSpecFromFlags(a, &o.trainer); !s.ok()) return Fail(s);
  o.trainer.num_threads = static_cast<int>(a.get_int("--threads", 0, 0, kMaxThreads));
  o.trainer.profiling = a.has("--profile");
  o.trainer.tracing = a.has("--trace");
  o.trainer.fusion = !a.has("--no-fusion");
  o.epochs = a.get_int("--epochs", 1, 1);
  o.seed = static_cast<uint64_t>(a.get_int("--seed", 0, 0));
  spec.seed = o.seed;
  o.shuffle = !a.has("--no-shuffle");
  o.drop_last = a.has("--drop-last");
  o.quiet = a.has("--quiet");
  o.val_split = a.get_double("--val-split", 0, DoubleRange{0, 1, false, true});
  const DeviceChoice device_choice = DeviceFromFlags(a);
  o.trainer.providers = device_choice.providers;
  o.trainer.placement = device_choice.placement;
  o.trainer.provider_options = ProviderOptionsFromFlags(a);
  o.trainer.device_graphs = DeviceGraphsFromFlags(a);

  // Model first: its input names say which data feeds what.
  auto graph = ImportModelFile(a.positional[0]);
  if (!graph.ok()) return Fail(graph.status());
  if (graph->inputs.empty()) return Fail(absl::InvalidArgumentError("the model has no inputs to feed"));
  const std::string input = graph->inputs[0].name;
  // --input / --val-input: each names a model input, and together they feed all of them.
  auto check_files = [&](const absl::StatusOr<std::map<std::string, std::string>>& files,
                         const std::string& flag) -> absl::Status {
    if (!files.ok()) return files.status();
    if (files->empty()) return absl::OkStatus();
    for (const auto& [name, path] : *files) {
      bool known = false;
      for (const ValueInfo& in : graph->inputs) known |= in.name == name;
      if (!known) return absl::InvalidArgumentError(flag + " " + name + ": the model has no input named '" + name + "'");
    }
    for (const ValueInfo& in : graph->inputs)
      if (!files->count(in.name))
        return absl::InvalidArgumentError("model input '" + in.name + "' has no data: give " + flag + " " + in.name +
                                          "=FILE.npy");
    return absl::OkStatus();
  };
  auto input_files = ParseAssignments(a.all("--input"), "--input", "NAME=FILE.npy");
  auto val_input_files = ParseAssignments(a.all("--val-input"), "--val-input", "NAME=FILE.npy");
  if (auto s = check_files(input_files, "--input"); !s.ok()) return Fail(s);
  if (auto s = check_files(val_input_files, "--val-input"); !s.ok()) return Fail(s);
  if (graph->inputs.size() > 1 && (input_files->empty() || a.has("--val-x"))) {
    std::string names;
    for (const ValueInfo& in : graph->inputs) names += (names.empty() ? "" : ", ") + in.name;
    return Fail(absl::InvalidArgumentError("the model has " + std::to_string(graph->inputs.size()) + " inputs (" +
                                           names + "): give each with --input NAME=FILE.npy (and --val-input "
                                           "for a validation set)"));
  }
  if ((!input_files->empty() && !a.has("--y")) || (!val_input_files->empty() && !a.has("--val-y")))
    return Fail(absl::InvalidArgumentError("--input and --val-input need the targets: --y / --val-y Y.npy"));

  // Data.
  absl::StatusOr<training::Dataset> data = absl::InvalidArgumentError(
      "give the data with --x/--y, --input NAME=X.npy ... --y Y.npy, --csv or --fashion-mnist");
  training::Dataset validation;
  if (!input_files->empty()) {
    if (a.has("--x")) return Fail(absl::InvalidArgumentError("give the inputs with --x or with --input, not both"));
    data = training::LoadNpyInputs(*input_files, input, a.get("--y"));
  } else if (a.has("--x") || a.has("--y")) {
    data = training::LoadNpyDataset(a.get("--x"), a.get("--y"));
  } else if (a.has("--csv")) {
    data = training::LoadCsv(a.get("--csv"));
  } else if (a.has("--fashion-mnist")) {
    std::string dir = a.positional.size() > 1 ? a.positional[1] : training::kFashionMnistDir;
    data = training::LoadFashionMnist(true, dir);
    if (data.ok() && o.val_split == 0) {
      auto test = training::LoadFashionMnist(false, dir);
      if (!test.ok()) return Fail(test.status());
      validation = std::move(*test);
    }
  }
  if (!data.ok()) return Fail(data.status());
  training::Dataset train = std::move(*data);
  if (!val_input_files->empty()) {
    auto val = training::LoadNpyInputs(*val_input_files, input, a.get("--val-y"));
    if (!val.ok()) return Fail(val.status());
    validation = std::move(*val);
  } else if (a.has("--val-x") || a.has("--val-y")) {
    auto val = training::LoadNpyDataset(a.get("--val-x"), a.get("--val-y"));
    if (!val.ok()) return Fail(val.status());
    validation = std::move(*val);
  }
  const int64_t k_fold = a.get_int("--k-fold", 0, 2);
  if (a.has("--k-fold")) {  // K models, each validated on its own fold
    if (dist->size > 1) return Fail(absl::InvalidArgumentError("--k-fold does not run data-parallel (--distributed)"));
    for (const char* flag : {"--val-split", "--val-x", "--val-y", "--val-input", "--checkpoint-dir", "--resume",
                             "--export", "--history", "--step-log", "--trace", "--profile"})
      if (a.has(flag))
        return Fail(absl::InvalidArgumentError(std::string("--k-fold trains and validates on folds of the data; it "
                                                           "does not take ") + flag));
    if (a.has("--fashion-mnist")) validation = training::Dataset();  // folds of the training set
    auto folds = training::MakeFolds(train.size(), k_fold);
    if (!folds.ok()) return Fail(folds.status());
  }
  if (o.val_split > 0) {
    auto split = training::SplitValidation(train, o.val_split, o.seed);
    if (!split.ok()) return Fail(split.status());
    train = std::move(split->first);
    validation = std::move(split->second);
  }
  const int64_t val_rows = validation.size();  // on all ranks together
  if (dist->size > 1 && val_rows > 0) {  // each rank validates its share
    const training::RowShare v = training::ShareOf(validation.size(), dist->rank, dist->size);
    validation = training::SliceRows(validation, v.begin, v.end);
  }
  // A fold trains on the rows outside its held-out block (at most N - N/K of them).
  const int64_t train_rows = k_fold ? train.size() - train.size() / k_fold : train.size();
  o.batch_size = std::min<int64_t>(a.get_int("--batch-size", 32, 1), train_rows);

  training::BatchIterator batches(train, o.batch_size, o.shuffle, o.seed, o.drop_last);
  o.trainer.schedule.total_steps =
      (k_fold ? training::Batches({0, train_rows}, o.batch_size, o.drop_last).size() : batches.num_batches()) *
      o.epochs;
  std::map<std::string, Dims> batch_dims;  // one batch's input shapes, for --device auto
  for (const auto& [name, x] : train.Inputs(input)) {
    Dims d = x.dims();
    d[0] = o.batch_size;
    batch_dims[name] = d;
  }
  o.trainer.dim_values = DimValuesOf(graph->inputs, batch_dims);
  if (dist->comm) dist->comm->SetContext("the start (rank 0's parameters to every rank)");
  auto trainer = training::Trainer::Create(*graph, o.trainer);
  if (!trainer.ok()) return Fail(trainer.status());
  training::Trainer& t = **trainer;
  if (!o.quiet) PrintPlacementChoice(t.placement_estimates());
  if (k_fold)
    return RunKFold(t, input, train, spec.loss,
                    KFoldOptions{k_fold, o.epochs, o.batch_size, o.seed, o.shuffle, o.drop_last, o.quiet});
  if (!o.quiet)
    std::printf("training %s: %zu parameter tensors, %lld samples (%lld validation), batch %lld, "
                "%lld steps/epoch, %s lr %g, device %s\n",
                a.positional[0].c_str(), t.parameter_names().size(),
                static_cast<long long>(train.size()), static_cast<long long>(val_rows),
                static_cast<long long>(o.batch_size), static_cast<long long>(batches.num_batches()),
                training::OptimizerName(spec.optimizer.kind), spec.optimizer.lr, t.device_description().c_str());
  if (!o.quiet && dist->size > 1)
    std::printf("data-parallel: %d ranks, each on its share of every batch (%s)\n", dist->size,
                dist->comm->description().c_str());

  const std::string ckpt_dir = a.get("--checkpoint-dir");
  const std::string ckpt = ckpt_dir + "/checkpoint.tdm";
  int64_t first_epoch = 1;
  int64_t ckpt_step = -1;  // the step of the checkpoint this run resumed from or wrote last
  const bool tty = isatty(fileno(stderr));
  // A failure that ends training: says why and where the run can continue from.
  auto stop = [&](const std::string& why) {
    std::string last = ckpt_dir.empty() ? "No checkpoint is kept (no --checkpoint-dir)."
                       : ckpt_step < 0  ? "No checkpoint has been written yet."
                                        : "The last good checkpoint is " + ckpt + " (step " +
                                              std::to_string(ckpt_step) + ").";
    if (tty) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "error: %s; stopping. %s\n", why.c_str(), last.c_str());
    return 1;
  };
  if (!ckpt_dir.empty() && lead) {
    std::error_code ec;
    std::filesystem::create_directories(ckpt_dir, ec);
    if (ec) return Fail(absl::PermissionDeniedError("cannot create " + ckpt_dir + ": " + ec.message()));
    // Temporary files of a run that was killed mid-write.
    for (const auto& entry : std::filesystem::directory_iterator(ckpt_dir, ec))
      if (entry.path().filename().string().rfind("checkpoint.tdm.tmp.", 0) == 0)
        std::filesystem::remove(entry.path(), ec);
  }
  if (a.has("--resume")) {
    if (ckpt_dir.empty()) return Fail(absl::InvalidArgumentError("--resume needs --checkpoint-dir"));
    auto c = training::LoadCheckpoint(ckpt);
    if (!c.ok()) return Fail(c.status());
    auto s = t.RestoreCheckpoint(*c);
    if (!s.ok()) return Fail(s);
    s = batches.RestoreRngState(c->rng_state);
    if (!s.ok()) return Fail(s);
    first_epoch = c->epoch + 1;
    ckpt_step = c->step;
    if (!o.quiet)
      std::printf("resumed from %s: epoch %lld, step %lld\n", ckpt.c_str(),
                  static_cast<long long>(c->epoch), static_cast<long long>(c->step));
  }
  std::vector<double> history, val_history, val_acc, step_losses;
  const int64_t steps_before = t.steps_taken();
  // On a device the dataset's float tensors are uploaded once (up to kResidentCap, any
  // size for a full batch, which is on the device each step anyway) and each batch is
  // gathered there in the BatchIterator's order; a full batch reads them as they are (its mean loss and gradient do not depend on the sample order).
  std::unique_ptr<training::ResidentBatches> resident;
  const bool full_batch = batches.num_batches() == 1 && o.batch_size >= train.size();
  if (t.device_description() != "cpu" &&
      (full_batch || training::ResidentBatches::ResidentBytes(train) <= kResidentCap)) {
    auto r = training::ResidentBatches::Create(t, train);
    if (r.ok()) {
      resident = std::move(*r);
      if (!o.quiet) std::printf("dataset resident on the device for the whole run\n");
    } else if (!o.quiet) {
      std::printf("dataset gathered on the host (%s)\n", std::string(r.status().message()).c_str());
    }
  }
  const bool data_parallel = dist->size > 1;
  const training::Dataset whole = resident && full_batch && !data_parallel ? resident->All() : training::Dataset();
  // The next batch (this rank's share of it in data-parallel training): from the device
  // copy when there is one, else gathered on the host. global_rows: the whole batch's rows.
  training::Dataset gathered;
  int64_t global_rows = 0;
  auto next_batch = [&]() -> absl::StatusOr<const training::Dataset*> {
    if (!resident && !data_parallel) {
      const training::Dataset* b = batches.Next();
      global_rows = b ? b->size() : 0;
      return b;
    }
    const int64_t* rows = nullptr;
    int64_t count = 0;
    if (!batches.NextRows(&rows, &count)) return nullptr;
    global_rows = count;
    if (full_batch && !data_parallel) return &whole;
    if (data_parallel) {
      // A rank without rows in this batch still steps (the collectives must match) on one
      // row that counts for nothing (share 0).
      const training::RowShare share = training::ShareOf(count, dist->rank, dist->size);
      t.set_batch_share(static_cast<double>(share.size()) / static_cast<double>(count), share.begin);
      rows += share.size() > 0 ? share.begin : 0;
      count = std::max<int64_t>(share.size(), 1);
    }
    if (!resident) {
      gathered = training::Gather(train, std::vector<int64_t>(rows, rows + count));
      return &gathered;
    }
    auto b = resident->Gather(rows, count);
    if (!b.ok()) return b.status();
    gathered = std::move(*b);
    return &gathered;
  };
  // Steps do not wait for the device (Trainer::StepAsync): their losses are taken every
  // kLossWindow steps and at each epoch's end, and after the first step at once (it also
  // builds the kernels' primitives, which the timing leaves out).
  struct PendingStep {
    int64_t step, batch, rows;
  };
  std::vector<PendingStep> pending;
  double sum = 0;
  int64_t seen = 0;
  // Adds the pending steps' losses to the epoch's sums; a non-empty result is why to stop.
  auto take_losses = [&](int64_t epoch) -> absl::StatusOr<std::string> {
    auto losses = t.TakeLosses();
    if (!losses.ok()) return losses.status();
    for (size_t i = 0; i < losses->size(); ++i) {
      const double l = (*losses)[i];
      const PendingStep& p = pending[i];
      if (!std::isfinite(l))  // the update has already spread it into the weights
        return "[train] step " + std::to_string(p.step) + " (epoch " + std::to_string(epoch) + ", batch " +
               std::to_string(p.batch) + "): loss is " + (std::isnan(l) ? "nan" : "inf");
      step_losses.push_back(l);
      sum += l * static_cast<double>(p.rows);
      seen += p.rows;
    }
    pending.clear();
    return std::string();
  };
  auto start = std::chrono::steady_clock::now();
  auto after_first_step = start;  // the first step also builds the kernels' primitives
  for (int64_t epoch = first_epoch; epoch <= o.epochs; ++epoch) {
    batches.Reset();
    sum = 0;
    seen = 0;
    int64_t step_in_epoch = 0;
    while (true) {
      auto nb = next_batch();
      if (!nb.ok()) return Fail(nb.status());
      const training::Dataset* b = *nb;
      if (!b) break;
      if (data_parallel)  // for the message that ends the job should a rank stop answering
        dist->comm->SetContext("step " + std::to_string(t.steps_taken() + 1) + " (epoch " + std::to_string(epoch) + ")");
      if (absl::Status s = t.StepAsync(b->Inputs(input), b->y); !s.ok()) return Fail(s);
      ++step_in_epoch;
      pending.push_back({t.steps_taken(), step_in_epoch, global_rows});
      const bool first = t.steps_taken() == steps_before + 1;
      if (first || static_cast<int64_t>(pending.size()) >= kLossWindow) {
        auto why = take_losses(epoch);
        if (!why.ok()) return Fail(why.status());
        if (!why->empty()) return stop(*why);
      }
      if (first) {
        if (o.trainer.profiling || o.trainer.tracing) t.ResetProfile();
        after_first_step = std::chrono::steady_clock::now();
      }
      if (tty && !o.quiet && step_in_epoch % 10 == 0 && seen > 0) {
        std::fprintf(stderr, "\repoch %lld/%lld  step %lld/%lld  loss %.5g  ",
                     static_cast<long long>(epoch), static_cast<long long>(o.epochs),
                     static_cast<long long>(step_in_epoch), static_cast<long long>(batches.num_batches()),
                     sum / static_cast<double>(seen));
      }
    }
    auto why = take_losses(epoch);
    if (!why.ok()) return Fail(why.status());
    if (!why->empty()) return stop(*why);
    double train_loss = sum / static_cast<double>(std::max<int64_t>(1, seen));
    history.push_back(train_loss);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double done_here = static_cast<double>(epoch - first_epoch + 1);
    double per_sec = static_cast<double>(train.size()) * done_here / elapsed;
    double eta = elapsed / done_here * static_cast<double>(o.epochs - epoch);
    std::string val;
    if (data_parallel) dist->comm->SetContext("the validation after epoch " + std::to_string(epoch));
    if (val_rows > 0) {
      auto m = Evaluate(t, input, validation, std::max<int64_t>(o.batch_size, 256), spec.loss, dist->comm);
      if (!m.ok()) return Fail(m.status());
      val_history.push_back(m->loss);
      char buf[96];
      std::snprintf(buf, sizeof buf, "  val loss %.5g", m->loss);
      val = buf;
      if (m->accuracy >= 0) {
        std::snprintf(buf, sizeof buf, "  val acc %.2f%%", 100 * m->accuracy);
        val += buf;
        val_acc.push_back(m->accuracy);
      }
    }
    if (!ckpt_dir.empty() && lead) {
      auto c = t.MakeCheckpoint(epoch, batches.RngState());
      if (!c.ok()) return Fail(c.status());
      const std::string at = "epoch " + std::to_string(epoch) + ", step " + std::to_string(c->step);
      const std::string bad = training::NonFiniteTensor(*c);
      if (!bad.empty()) return stop("[train] " + at + ": " + bad + " holds NaN or Inf; no checkpoint written");
      auto s = training::SaveCheckpoint(ckpt, *c);
      if (!s.ok()) return stop(std::string(s.message()) + " (" + at + ")");
      ckpt_step = c->step;
    }
    bool show = !o.quiet && (o.epochs <= 50 || epoch % (o.epochs / 20) == 0 || epoch == o.epochs);
    if (show) {
      if (tty) std::fprintf(stderr, "\r\033[K");
      std::printf("epoch %lld/%lld  loss %.6g%s  %.0f samples/s  elapsed %s  eta %s\n",
                  static_cast<long long>(epoch), static_cast<long long>(o.epochs), train_loss,
                  val.c_str(), per_sec, Duration(elapsed).c_str(), Duration(eta).c_str());
      std::fflush(stdout);
    }
  }
  const auto end = std::chrono::steady_clock::now();
  double total = std::chrono::duration<double>(end - start).count();
  const int64_t steps_here = t.steps_taken() - steps_before;
  std::printf("done: %lld steps in %s (%.4g ms/step", static_cast<long long>(steps_here),
              Duration(total).c_str(), 1000 * total / static_cast<double>(std::max<int64_t>(1, steps_here)));
  if (steps_here > 1) {
    const double rest = std::chrono::duration<double>(end - after_first_step).count();
    std::printf(", %.4g after the first", 1000 * rest / static_cast<double>(steps_here - 1));
  }
  std::printf(")");
  if (!history.empty()) std::printf(", final train loss %.6g", history.back());
  if (!val_acc.empty()) std::printf(", validation accuracy %.2f%%", 100 * val_acc.back());
  std::printf("\n");
  PrintDeviceGraphStatus(t.training_session(), steps_here);

  if (!lead) return 0;  // the files are rank 0's
  if (a.has("--profile")) PrintProfile(t.profile());
  if (a.has("--trace")) {
    if (auto st = WriteChromeTrace(t.trace(), a.get("--trace")); !st.ok()) return Fail(st);
    if (!o.quiet) std::printf("wrote %s\n", a.get("--trace").c_str());
  }
  if (a.has("--history")) {
    std::string path = a.get("--history");
    std::ofstream csv(path);
    csv << "epoch,train_loss" << (val_history.empty() ? "" : ",val_loss")
        << (val_acc.empty() ? "" : ",val_accuracy") << "\n";
    for (size_t e = 0; e < history.size(); ++e) {
      csv << e + first_epoch << "," << history[e];
      if (!val_history.empty()) csv << "," << val_history[e];
      if (!val_acc.empty()) csv << "," << val_acc[e];
      csv << "\n";
    }
    std::string svg = path.size() > 4 && path.substr(path.size() - 4) == ".csv"
                          ? path.substr(0, path.size() - 4) + ".svg" : path + ".svg";
    auto s = WriteLossPlotSvg(svg, history, val_history, "tandem train: " + a.positional[0]);
    if (!s.ok()) return Fail(s);
    std::printf("history: %s, plot: %s\n", path.c_str(), svg.c_str());
  }
  if (a.has("--step-log")) {
    std::ofstream log(a.get("--step-log"));
    log << "step,loss\n";
    log.precision(9);
    for (size_t i = 0; i < step_losses.size(); ++i) log << i + 1 << "," << step_losses[i] << "\n";
    if (!log) return Fail(absl::DataLossError("cannot write " + a.get("--step-log")));
  }
  if (a.has("--export")) {
    auto g = t.ExportInference();
    if (!g.ok()) return Fail(g.status());
    auto s = ExportModelFile(*g, a.get("--export"));
    if (!s.ok()) return Fail(s);
    std::printf("exported: %s\n", a.get("--export").c_str());
  }
  return 0;
}

}  // namespace tandem::cli
