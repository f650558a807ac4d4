// cpp_training: train a small regression MLP with tandem::TrainingSession.
//
//   usage: cpp_training MODEL.onnx [--epochs N] [--batch-size N] [--lr X] [--grid N]
//                                  [--device cpu|cuda|auto] [--out-dir DIR]
//
// MODEL is models/peaks_mlp.onnx (x: float[batch,2] -> y: float[batch,1]) or any model
// with one input of 2 floats and one output of 1 float per sample. The data is MATLAB's
// "peaks" surface on a GRID x GRID grid over [-3,3]^2:
//   z = 3(1-x)^2 e^{-x^2-(y+1)^2} - 10(x/5 - x^3 - y^5) e^{-x^2-y^2} - 1/3 e^{-(x+1)^2-y^2}
// It trains with mse and adam (shuffled mini-batches), printing the loss per epoch, then
//  - saves a checkpoint (DIR/peaks.ckpt) and checks that a fresh training session that
//    loads it has the same step count and loss,
//  - exports the trained model (DIR/peaks_trained.onnx), reloads it as a tandem::Session
//    and checks its predictions equal the training session's (within 1e-5).
// Exit code 0 when the loss fell and every check passed, 1 otherwise, 2 on bad usage.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <tandem/tandem.hpp>

namespace {

struct Config {
  std::string model;
  int epochs = 30;
  int batch_size = 64;
  double lr = 0.01;
  int grid = 60;
  std::string device = "cpu";
  std::string out_dir = ".";
};

double Peaks(double x, double y) {
  return 3 * (1 - x) * (1 - x) * std::exp(-x * x - (y + 1) * (y + 1)) -
         10 * (x / 5 - x * x * x - std::pow(y, 5)) * std::exp(-x * x - y * y) -
         std::exp(-(x + 1) * (x + 1) - y * y) / 3;
}

[[noreturn]] void Usage(const char* argv0, const std::string& why) {
  if (!why.empty()) std::fprintf(stderr, "error: %s\n", why.c_str());
  std::fprintf(stderr,
               "usage: %s MODEL.onnx [--epochs N] [--batch-size N] [--lr X] [--grid N] "
               "[--device cpu|cuda|auto] [--out-dir DIR]\n",
               argv0);
  std::exit(2);
}

Config ParseArgs(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("usage: %s MODEL.onnx [--epochs N] [--batch-size N] [--lr X] [--grid N] "
                  "[--device cpu|cuda|auto] [--out-dir DIR]\n"
                  "Trains MODEL (2 inputs -> 1 output) on the peaks surface with Adam, saves a checkpoint,\n"
                  "exports the model and checks the export predicts what the training session does.\n",
                  argv[0]);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!c.model.empty()) Usage(argv[0], "unexpected argument '" + arg + "'");
      c.model = arg;
      continue;
    }
    if (i + 1 >= argc) Usage(argv[0], arg + " needs a value");
    const std::string v = argv[++i];
    char* end = nullptr;
    if (arg == "--epochs") c.epochs = static_cast<int>(std::strtol(v.c_str(), &end, 10));
    else if (arg == "--batch-size") c.batch_size = static_cast<int>(std::strtol(v.c_str(), &end, 10));
    else if (arg == "--grid") c.grid = static_cast<int>(std::strtol(v.c_str(), &end, 10));
    else if (arg == "--lr") c.lr = std::strtod(v.c_str(), &end);
    else if (arg == "--device") c.device = v;
    else if (arg == "--out-dir") c.out_dir = v;
    else Usage(argv[0], "unknown flag " + arg);
    if (end != nullptr && (*end != '\0' || end == v.c_str())) Usage(argv[0], "bad value for " + arg + ": " + v);
  }
  if (c.model.empty()) Usage(argv[0], "");
  if (c.epochs < 1 || c.batch_size < 1 || c.grid < 2 || !(c.lr > 0)) Usage(argv[0], "values must be positive");
  return c;
}

// Largest |a - b| relative to max(1, |b|).
double MaxRelDiff(const tandem::Tensor& a, const tandem::Tensor& b) {
  if (a.dims() != b.dims()) return INFINITY;
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(pa[i]) - pb[i]) / std::max(1.0, std::fabs(static_cast<double>(pb[i]))));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = ParseArgs(argc, argv);
  try {
    // The data set: row i of x is a grid point, row i of y its peaks value.
    const int64_t n = static_cast<int64_t>(cfg.grid) * cfg.grid;
    std::vector<float> x(static_cast<size_t>(n) * 2), y(static_cast<size_t>(n));
    for (int i = 0; i < cfg.grid; ++i)
      for (int j = 0; j < cfg.grid; ++j) {
        const size_t k = static_cast<size_t>(i) * cfg.grid + j;
        const double gx = -3.0 + 6.0 * j / (cfg.grid - 1), gy = -3.0 + 6.0 * i / (cfg.grid - 1);
        x[2 * k] = static_cast<float>(gx);
        x[2 * k + 1] = static_cast<float>(gy);
        y[k] = static_cast<float>(Peaks(gx, gy));
      }
    const tandem::Tensor all_x = tandem::Tensor::Wrap(x.data(), {n, 2});
    const tandem::Tensor all_y = tandem::Tensor::Wrap(y.data(), {n, 1});

    tandem::Env env;
    tandem::TrainingOptions options;
    options.Set("loss", "mse").Set("optimizer", "adam").Set("lr", cfg.lr).Set("device", cfg.device);
    tandem::TrainingSession trainer(env, cfg.model, options);
    std::printf("model %s (tandem %s): inputs", cfg.model.c_str(), tandem::Version().c_str());
    for (const std::string& name : trainer.input_names()) std::printf(" %s", name.c_str());
    std::printf("; %lld samples, batch %d, adam lr %g, mse, device %s\n", static_cast<long long>(n), cfg.batch_size,
                trainer.LearningRate(), cfg.device.c_str());

    const double initial = trainer.EvalStep(all_x, all_y).loss;
    std::printf("initial loss %.6f\n", initial);

    std::mt19937 rng(0);
    std::vector<size_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::vector<float> bx, by;
    double final_loss = initial;
    for (int epoch = 1; epoch <= cfg.epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), rng);
      double sum = 0;
      for (int64_t start = 0; start < n; start += cfg.batch_size) {
        const int64_t b = std::min<int64_t>(cfg.batch_size, n - start);
        bx.resize(static_cast<size_t>(b) * 2);
        by.resize(static_cast<size_t>(b));
        for (int64_t r = 0; r < b; ++r) {
          const size_t k = order[static_cast<size_t>(start + r)];
          bx[2 * r] = x[2 * k];
          bx[2 * r + 1] = x[2 * k + 1];
          by[r] = y[k];
        }
        const tandem::Tensor tx = tandem::Tensor::Wrap(bx.data(), {b, 2});
        const tandem::Tensor ty = tandem::Tensor::Wrap(by.data(), {b, 1});
        sum += trainer.TrainStep(tx, ty) * static_cast<double>(b);
      }
      final_loss = trainer.EvalStep(all_x, all_y).loss;
      std::printf("epoch %3d/%d  train loss %.6f  eval loss %.6f\n", epoch, cfg.epochs, sum / static_cast<double>(n),
                  final_loss);
    }
    const int64_t steps = trainer.Steps();
    int failures = 0;
    if (final_loss < initial) {
      std::printf("loss fell: %.6f -> %.6f after %lld steps\n", initial, final_loss, static_cast<long long>(steps));
    } else {
      std::printf("FAILED: the loss did not fall (%.6f -> %.6f)\n", initial, final_loss);
      ++failures;
    }

    // Checkpoint: a fresh session that loads it has the same step count and loss.
    const std::string checkpoint = cfg.out_dir + "/peaks.ckpt";
    trainer.SaveCheckpoint(checkpoint);
    {
      tandem::TrainingSession restored(env, cfg.model, options);
      restored.LoadCheckpoint(checkpoint);
      const double loss = restored.EvalStep(all_x, all_y).loss;
      const bool ok = restored.Steps() == steps && std::fabs(loss - final_loss) <= 1e-6 * std::max(1.0, final_loss);
      std::printf("checkpoint %s: reloaded %lld steps, loss %.6f: %s\n", checkpoint.c_str(),
                  static_cast<long long>(restored.Steps()), loss, ok ? "ok" : "MISMATCH");
      if (!ok) ++failures;
    }

    // Export, reload for inference, compare with the training session's predictions.
    const std::string exported = cfg.out_dir + "/peaks_trained.onnx";
    trainer.Export(exported);
    tandem::Session session(env, exported);
    const tandem::IoInfo in = session.input(0);
    const tandem::Tensor predicted = trainer.Predict(all_x);
    std::vector<tandem::Tensor> served = session.Run({{in.name, &all_x}});
    const double diff = MaxRelDiff(served.at(0), predicted);
    const bool same = diff <= 1e-5;
    std::printf("exported %s (input %s %s): predictions %s the training session's (max rel diff %.3g)\n",
                exported.c_str(), in.name.c_str(), in.ToString().c_str(), same ? "equal" : "DIFFER from", diff);
    if (!same) ++failures;

    const float* p = predicted.data<float>();
    std::printf("sample predictions:");
    for (int q = 1; q <= 3; ++q) {  // three points on the grid's diagonal
      const size_t k = static_cast<size_t>(cfg.grid * q / 4) * (cfg.grid + 1);
      std::printf("  f(%.2f,%.2f)=%.3f (true %.3f)", x[2 * k], x[2 * k + 1], p[k], y[k]);
    }
    std::printf("\n");
    return failures == 0 ? 0 : 1;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "tandem error (code %d): %s\n", static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
