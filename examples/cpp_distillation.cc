// cpp_distillation: a teacher evaluated on the CPU and a student trained on the GPU at the
// same time, in one process: two sessions, two threads, a bounded queue between them.
//
//   usage: cpp_distillation TEACHER.onnx [--student STUDENT.onnx] [--device cpu|cuda|auto]
//                           [--teacher-epochs N] [--epochs N] [--batch-size N] [--out-dir DIR]
//
// Models: 2 inputs -> 1 output per sample (models/peaks_mlp.onnx for both by default). The
// data is the peaks surface on a 60x60 grid (see cpp_training.cc). Steps:
//  1. the teacher is fitted to the true surface on the CPU and exported (DIR/teacher.onnx);
//  2. distillation: a producer thread runs the exported teacher on the CPU (a Session) to
//     make the soft targets of each shuffled batch, while the main thread trains the
//     student on the earlier batches with them (a TrainingSession on --device, default
//     auto: the GPU when one is visible). The queue holds at most 4 batches.
// Prints the student's error against the teacher and the truth, and how much of the
// teacher's and the student's time overlapped. Exit 0 when the student's error against
// the teacher fell at least 4x, 1 otherwise, 2 on bad usage.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>

namespace {

struct Config {
  std::string teacher, student, device = "auto", out_dir = ".";
  int teacher_epochs = 40, epochs = 40, batch_size = 64;
};

double Peaks(double x, double y) {
  return 3 * (1 - x) * (1 - x) * std::exp(-x * x - (y + 1) * (y + 1)) -
         10 * (x / 5 - x * x * x - std::pow(y, 5)) * std::exp(-x * x - y * y) -
         std::exp(-(x + 1) * (x + 1) - y * y) / 3;
}

const char kUsage[] =
    "usage: %s TEACHER.onnx [--student STUDENT.onnx] [--device cpu|cuda|auto] [--teacher-epochs N]\n"
    "       [--epochs N] [--batch-size N] [--out-dir DIR]\n"
    "Fits TEACHER to the peaks surface on the CPU, then distills it into STUDENT (default: a\n"
    "fresh copy of TEACHER) with the teacher on the CPU and the student on --device, concurrently.\n";

Config ParseArgs(int argc, char** argv) {
  Config c;
  auto usage = [&](const std::string& why) {
    if (!why.empty()) std::fprintf(stderr, "error: %s\n", why.c_str());
    std::fprintf(stderr, kUsage, argv[0]);
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf(kUsage, argv[0]);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!c.teacher.empty()) usage("unexpected argument '" + arg + "'");
      c.teacher = arg;
      continue;
    }
    if (i + 1 >= argc) usage(arg + " needs a value");
    const std::string v = argv[++i];
    char* end = nullptr;
    if (arg == "--student") c.student = v;
    else if (arg == "--device") c.device = v;
    else if (arg == "--out-dir") c.out_dir = v;
    else if (arg == "--teacher-epochs") c.teacher_epochs = static_cast<int>(std::strtol(v.c_str(), &end, 10));
    else if (arg == "--epochs") c.epochs = static_cast<int>(std::strtol(v.c_str(), &end, 10));
    else if (arg == "--batch-size") c.batch_size = static_cast<int>(std::strtol(v.c_str(), &end, 10));
    else usage("unknown flag " + arg);
    if (end != nullptr && (*end != '\0' || end == v.c_str())) usage("bad value for " + arg + ": " + v);
  }
  if (c.teacher.empty()) usage("");
  if (c.student.empty()) c.student = c.teacher;
  if (c.teacher_epochs < 1 || c.epochs < 1 || c.batch_size < 1) usage("values must be positive");
  return c;
}

// One shuffled batch with the teacher's predictions as its targets.
struct Batch {
  std::vector<float> x, soft_y;
  int64_t rows = 0;
};

// A queue of at most `capacity` batches; Close() ends it.
class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}
  void Push(Batch b) {  // dropped once closed
    std::unique_lock<std::mutex> lock(mu_);
    not_full_.wait(lock, [&] { return q_.size() < capacity_ || closed_; });
    if (closed_) return;
    q_.push_back(std::move(b));
    not_empty_.notify_one();
  }
  bool Pop(Batch* b) {  // false once closed and drained
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !q_.empty() || closed_; });
    if (q_.empty()) return false;
    *b = std::move(q_.front());
    q_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void Close() {  // wakes both sides
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<Batch> q_;
  bool closed_ = false;
};

using Clock = std::chrono::steady_clock;
double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double Mse(const tandem::Tensor& a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += (a.data<float>()[i] - b[i]) * (a.data<float>()[i] - b[i]);
  return s / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = ParseArgs(argc, argv);
  try {
    const int grid = 60;
    const int64_t n = static_cast<int64_t>(grid) * grid;
    std::vector<float> x(static_cast<size_t>(n) * 2), y(static_cast<size_t>(n));
    for (int i = 0; i < grid; ++i)
      for (int j = 0; j < grid; ++j) {
        const size_t k = static_cast<size_t>(i) * grid + j;
        x[2 * k] = static_cast<float>(-3.0 + 6.0 * j / (grid - 1));
        x[2 * k + 1] = static_cast<float>(-3.0 + 6.0 * i / (grid - 1));
        y[k] = static_cast<float>(Peaks(x[2 * k], x[2 * k + 1]));
      }
    const tandem::Tensor all_x = tandem::Tensor::Wrap(x.data(), {n, 2});
    const tandem::Tensor all_y = tandem::Tensor::Wrap(y.data(), {n, 1});
    tandem::Env env;

    // 1. The teacher, fitted on the CPU (full batch, many Adam steps) and exported.
    tandem::TrainingOptions teacher_options;
    teacher_options.Set("loss", "mse").Set("optimizer", "adam").Set("lr", 0.01).Set("device", "cpu");
    tandem::TrainingSession fit(env, cfg.teacher, teacher_options);
    std::mt19937 rng(0);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto batch_of = [&](int64_t start, std::vector<float>* bx, std::vector<float>* by) {
      const int64_t b = std::min<int64_t>(cfg.batch_size, n - start);
      bx->resize(static_cast<size_t>(b) * 2);
      if (by) by->resize(static_cast<size_t>(b));
      for (int64_t r = 0; r < b; ++r) {
        const size_t k = static_cast<size_t>(order[static_cast<size_t>(start + r)]);
        (*bx)[2 * r] = x[2 * k];
        (*bx)[2 * r + 1] = x[2 * k + 1];
        if (by) (*by)[r] = y[k];
      }
      return b;
    };
    std::vector<float> bx, by;
    for (int epoch = 0; epoch < cfg.teacher_epochs; ++epoch) {
      std::shuffle(order.begin(), order.end(), rng);
      for (int64_t start = 0; start < n; start += cfg.batch_size) {
        const int64_t b = batch_of(start, &bx, &by);
        fit.TrainStep(tandem::Tensor::Wrap(bx.data(), {b, 2}), tandem::Tensor::Wrap(by.data(), {b, 1}));
      }
    }
    const std::string teacher_path = cfg.out_dir + "/teacher.onnx";
    fit.Export(teacher_path);
    std::printf("teacher %s: fitted on the CPU for %d epochs, MSE vs the surface %.5f; exported %s\n",
                cfg.teacher.c_str(), cfg.teacher_epochs, fit.EvalStep(all_x, all_y).loss, teacher_path.c_str());

    // 2. Distillation: the teacher on the CPU in one thread, the student on --device here.
    tandem::SessionOptions cpu_only;
    cpu_only.SetProviders({"cpu"}).SetThreads(1);
    tandem::Session teacher(env, teacher_path, &cpu_only);
    const std::string teacher_input = teacher.input(0).name;
    const tandem::Tensor teacher_all = std::move(teacher.Run({{teacher_input, &all_x}}).at(0));
    std::vector<float> soft_all(teacher_all.data<float>(), teacher_all.data<float>() + n);
    tandem::TrainingOptions student_options;
    student_options.Set("loss", "mse").Set("optimizer", "adam").Set("lr", 0.01).Set("device", cfg.device);
    tandem::TrainingSession student(env, cfg.student, student_options);
    const tandem::Tensor soft = tandem::Tensor::Wrap(soft_all.data(), {n, 1});
    const double before = student.EvalStep(all_x, soft).loss;

    BatchQueue queue(4);
    double teacher_busy = 0;
    const auto start = Clock::now();
    std::thread producer([&] {  // the teacher's thread: CPU inference only
      std::mt19937 shuffle_rng(1);
      std::vector<int64_t> mine(order.size());
      std::iota(mine.begin(), mine.end(), 0);
      try {
        for (int epoch = 0; epoch < cfg.epochs; ++epoch) {
          std::shuffle(mine.begin(), mine.end(), shuffle_rng);
          for (int64_t s = 0; s < n; s += cfg.batch_size) {
            Batch b;
            b.rows = std::min<int64_t>(cfg.batch_size, n - s);
            b.x.resize(static_cast<size_t>(b.rows) * 2);
            for (int64_t r = 0; r < b.rows; ++r) {
              const size_t k = static_cast<size_t>(mine[static_cast<size_t>(s + r)]);
              b.x[2 * r] = x[2 * k];
              b.x[2 * r + 1] = x[2 * k + 1];
            }
            const auto t0 = Clock::now();
            const tandem::Tensor in = tandem::Tensor::Wrap(b.x.data(), {b.rows, 2});
            const tandem::Tensor out = std::move(teacher.Run({{teacher_input, &in}}).at(0));
            b.soft_y.assign(out.data<float>(), out.data<float>() + b.rows);
            teacher_busy += Seconds(Clock::now() - t0);
            queue.Push(std::move(b));
          }
        }
      } catch (const tandem::Error& e) {
        std::fprintf(stderr, "teacher thread: %s\n", e.what());
      }
      queue.Close();
    });
    struct JoinOnExit {  // a failed student step still stops and joins the teacher's thread
      BatchQueue& queue;
      std::thread& thread;
      ~JoinOnExit() {
        queue.Close();
        if (thread.joinable()) thread.join();
      }
    } join_on_exit{queue, producer};
    double student_busy = 0;
    int64_t steps = 0;
    Batch b;
    while (queue.Pop(&b)) {  // the student's thread: training steps on --device
      const auto t0 = Clock::now();
      student.TrainStep(tandem::Tensor::Wrap(b.x.data(), {b.rows, 2}), tandem::Tensor::Wrap(b.soft_y.data(), {b.rows, 1}));
      student_busy += Seconds(Clock::now() - t0);
      ++steps;
    }
    producer.join();
    const double wall = Seconds(Clock::now() - start);
    const int64_t expected = static_cast<int64_t>(cfg.epochs) * ((n + cfg.batch_size - 1) / cfg.batch_size);

    const double after = student.EvalStep(all_x, soft).loss;
    const double vs_truth = student.EvalStep(all_x, all_y).loss;
    std::printf("student %s on device '%s': %lld steps on the teacher's targets\n", cfg.student.c_str(),
                cfg.device.c_str(), static_cast<long long>(steps));
    std::printf("student MSE vs the teacher: %.5f -> %.5f; vs the surface: %.5f (teacher %.5f)\n", before, after,
                vs_truth, Mse(teacher_all, y.data(), n));
    std::printf("time: wall %.2f s, teacher busy %.2f s (CPU thread), student busy %.2f s; overlap %.0f%% "
                "(wall below the sum by %.2f s)\n",
                wall, teacher_busy, student_busy,
                100.0 * std::max(0.0, teacher_busy + student_busy - wall) / std::max(1e-9, std::min(teacher_busy, student_busy)),
                teacher_busy + student_busy - wall);
    const bool ok = steps == expected && after * 4 <= before;
    std::printf("%s\n", ok ? "distillation ok" : "FAILED: too few steps or the student did not learn the teacher");
    return ok ? 0 : 1;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "tandem error (code %d): %s\n", static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
