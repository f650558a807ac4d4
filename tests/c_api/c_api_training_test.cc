// The C API's training calls: SGD steps against a float64 hand-derived reference,
// learning rate, checkpoints, export, and refusal of concurrent use.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>

#include "tests/c_api/c_api_helpers.h"

namespace tandem_test {
namespace {

TrainingPtr MakeTraining(TandemEnv* env, const std::vector<std::pair<const char*, const char*>>& settings) {
  TandemTrainingOptions* o = nullptr;
  EXPECT_TANDEM_OK(tandem_training_options_create(&o));
  for (const auto& [k, v] : settings) EXPECT_TANDEM_OK(tandem_training_options_set(o, k, v));
  TandemTrainingSession* ts = nullptr;
  EXPECT_TANDEM_OK(tandem_training_session_create(env, ModelPath("ode_mlp.onnx").c_str(), o, &ts));
  tandem_training_options_release(o);
  return TrainingPtr(ts);
}

// One SGD step of mean-squared error on the 3-100-3 tanh MLP, in double; returns the loss
// before the update (what the train step reports).
double SgdStep(ReferenceMlp& m, const std::vector<float>& x, const std::vector<float>& t, int64_t rows,
               double lr) {
  auto& l1 = m.layers[0];
  auto& l2 = m.layers[1];
  std::vector<double> h(rows * l1.out), y(rows * l2.out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < l1.out; ++o) {
      double s = l1.b[o];
      for (int64_t i = 0; i < l1.in; ++i) s += x[r * l1.in + i] * l1.w[o * l1.in + i];
      h[r * l1.out + o] = std::tanh(s);
    }
  double loss = 0;
  const double n = static_cast<double>(rows * l2.out);
  std::vector<double> dy(rows * l2.out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < l2.out; ++o) {
      double s = l2.b[o];
      for (int64_t i = 0; i < l2.in; ++i) s += h[r * l2.in + i] * l2.w[o * l2.in + i];
      double d = s - t[r * l2.out + o];
      loss += d * d / n;
      dy[r * l2.out + o] = 2 * d / n;
    }
  std::vector<double> dz(rows * l1.out, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < l2.in; ++i) {
      double g = 0;
      for (int64_t o = 0; o < l2.out; ++o) g += dy[r * l2.out + o] * l2.w[o * l2.in + i];
      dz[r * l1.out + i] = g * (1 - h[r * l1.out + i] * h[r * l1.out + i]);
    }
  for (int64_t o = 0; o < l2.out; ++o) {
    double gb = 0;
    for (int64_t r = 0; r < rows; ++r) gb += dy[r * l2.out + o];
    for (int64_t i = 0; i < l2.in; ++i) {
      double gw = 0;
      for (int64_t r = 0; r < rows; ++r) gw += dy[r * l2.out + o] * h[r * l2.in + i];
      l2.w[o * l2.in + i] -= lr * gw;
    }
    l2.b[o] -= lr * gb;
  }
  for (int64_t o = 0; o < l1.out; ++o) {
    double gb = 0;
    for (int64_t r = 0; r < rows; ++r) gb += dz[r * l1.out + o];
    for (int64_t i = 0; i < l1.in; ++i) {
      double gw = 0;
      for (int64_t r = 0; r < rows; ++r) gw += dz[r * l1.out + o] * x[r * l1.in + i];
      l1.w[o * l1.in + i] -= lr * gw;
    }
    l1.b[o] -= lr * gb;
  }
  return loss;
}

struct Batch {
  std::vector<float> x, y;
  int64_t rows;
  explicit Batch(int64_t n) : x(n * 3), y(n * 3), rows(n) {
    for (int64_t i = 0; i < n * 3; ++i) {
      x[i] = std::cos(0.71f * i) * 2.f;
      y[i] = std::sin(0.53f * i);
    }
  }
};

TEST(CApiTraining, SgdStepsMatchFloat64Reference) {
  EnvPtr env = MakeEnv();
  TrainingPtr ts = MakeTraining(env.get(), {{"loss", "mse"}, {"optimizer", "sgd"}, {"lr", "0.1"}});
  ASSERT_TRUE(ts);
  ReferenceMlp ref = ReferenceMlp::Load(ModelPath("ode_mlp.onnx"));
  Batch b(16);
  TensorPtr x = Wrap(b.x, b.rows, 3), y = Wrap(b.y, b.rows, 3);
  const char* input_name = nullptr;
  ASSERT_TANDEM_OK(tandem_training_session_input_name(ts.get(), 0, &input_name));
  EXPECT_STREQ(input_name, "x");
  size_t outputs = 0;
  EXPECT_TANDEM_OK(tandem_training_session_output_count(ts.get(), &outputs));
  EXPECT_EQ(outputs, 1u);
  const char* names[] = {"x"};
  const TandemTensor* inputs[] = {x.get()};
  double first = 0, last = 0;
  for (int step = 0; step < 8; ++step) {
    double loss = -1;
    ASSERT_TANDEM_OK(tandem_training_session_train_step(ts.get(), names, inputs, 1, y.get(), &loss));
    double want = SgdStep(ref, b.x, b.y, b.rows, 0.1);
    EXPECT_NEAR(loss, want, 1e-5 * std::abs(want) + 1e-7) << "step " << step;
    (step == 0 ? first : last) = loss;
  }
  EXPECT_LT(last, first);
  int64_t steps = 0;
  EXPECT_TANDEM_OK(tandem_training_session_steps(ts.get(), &steps));
  EXPECT_EQ(steps, 8);
  // Eval: the loss of the current weights equals the reference's next pre-update loss.
  double eval_loss = -1, accuracy = 0;
  ASSERT_TANDEM_OK(tandem_training_session_eval_step(ts.get(), names, inputs, 1, y.get(), &eval_loss, &accuracy));
  double want = SgdStep(ref, b.x, b.y, b.rows, 0.0);
  EXPECT_NEAR(eval_loss, want, 1e-5 * want);
  EXPECT_EQ(accuracy, -1);  // mse is not a classification loss
}

TEST(CApiTraining, LearningRateCheckpointAndExport) {
  EnvPtr env = MakeEnv();
  TrainingPtr ts = MakeTraining(env.get(), {{"optimizer", "adam"}, {"lr", "0.01"}});
  ASSERT_TRUE(ts);
  double lr = 0;
  EXPECT_TANDEM_OK(tandem_training_session_learning_rate(ts.get(), &lr));
  EXPECT_NEAR(lr, 0.01, 1e-9);
  void* stream = &lr;
  EXPECT_TANDEM_OK(tandem_training_session_device_stream(ts.get(), &stream));
  EXPECT_EQ(stream, nullptr) << "training on the CPU: no device stream";
  EXPECT_TANDEM_OK(tandem_training_session_set_learning_rate(ts.get(), 0.005));
  EXPECT_TANDEM_OK(tandem_training_session_learning_rate(ts.get(), &lr));
  EXPECT_NEAR(lr, 0.005, 1e-9);
  Batch b(8);
  TensorPtr x = Wrap(b.x, b.rows, 3), y = Wrap(b.y, b.rows, 3);
  const char* names[] = {"x"};
  const TandemTensor* inputs[] = {x.get()};
  for (int i = 0; i < 3; ++i)
    ASSERT_TANDEM_OK(tandem_training_session_train_step(ts.get(), names, inputs, 1, y.get(), nullptr));
  std::string dir = ::testing::TempDir();
  std::string ckpt = dir + "/c_api_ckpt.tdm", model = dir + "/c_api_trained.onnx";
  ASSERT_TANDEM_OK(tandem_training_session_save_checkpoint(ts.get(), ckpt.c_str()));
  ASSERT_TANDEM_OK(tandem_training_session_export(ts.get(), model.c_str()));
  TandemTensor* predicted = nullptr;
  ASSERT_TANDEM_OK(tandem_training_session_predict(ts.get(), names, inputs, 1, 1, &predicted));
  TensorPtr hp(predicted);
  // The exported model computes what the training session predicts.
  SessionPtr exported = MakeSession(env.get(), model);
  TandemTensor* out = nullptr;
  ASSERT_TANDEM_OK(tandem_session_run(exported.get(), names, inputs, 1, nullptr, 1, &out));
  TensorPtr ho(out);
  std::vector<float> a = Values(predicted), e = Values(out);
  ASSERT_EQ(a.size(), e.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], e[i], 1e-6);
  // More steps change the weights; loading the checkpoint brings the predictions back.
  for (int i = 0; i < 3; ++i)
    ASSERT_TANDEM_OK(tandem_training_session_train_step(ts.get(), names, inputs, 1, y.get(), nullptr));
  ASSERT_TANDEM_OK(tandem_training_session_load_checkpoint(ts.get(), ckpt.c_str()));
  int64_t steps = 0;
  EXPECT_TANDEM_OK(tandem_training_session_steps(ts.get(), &steps));
  EXPECT_EQ(steps, 3);
  TandemTensor* restored = nullptr;
  ASSERT_TANDEM_OK(tandem_training_session_predict(ts.get(), names, inputs, 1, 1, &restored));
  TensorPtr hr(restored);
  EXPECT_EQ(Values(restored), a);
  std::remove(ckpt.c_str());
  std::remove(model.c_str());
}

// A second thread calling into a training session that is busy is refused with
// TANDEM_BUSY; every step that was accepted is counted exactly once.
TEST(CApiTraining, ConcurrentUseIsRefusedNotCorrupting) {
  EnvPtr env = MakeEnv();
  TrainingPtr ts = MakeTraining(env.get(), {{"optimizer", "sgd"}, {"lr", "0.01"}, {"threads", "1"}});
  ASSERT_TRUE(ts);
  Batch b(2048);
  TensorPtr x = Wrap(b.x, b.rows, 3), y = Wrap(b.y, b.rows, 3);
  const char* names[] = {"x"};
  const TandemTensor* inputs[] = {x.get()};
  std::atomic<int> accepted{0}, busy{0}, other{0};
  std::atomic<bool> done{false};
  auto worker = [&] {
    while (!done) {
      TandemStatus* s = tandem_training_session_train_step(ts.get(), names, inputs, 1, y.get(), nullptr);
      if (!s) ++accepted;
      else if (tandem_status_code(s) == TANDEM_BUSY) ++busy;
      else ++other;
      tandem_status_release(s);
    }
  };
  std::thread a(worker), c(worker);
  // Until the two workers have collided (on a loaded machine that can take a while; the
  // bound only keeps a broken lock from hanging the test), then a little more of both.
  for (int i = 0; i < 12000 && (busy.load() == 0 || accepted.load() == 0); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  done = true;
  a.join();
  c.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_GT(busy.load(), 0);
  int64_t steps = 0;
  EXPECT_TANDEM_OK(tandem_training_session_steps(ts.get(), &steps));
  EXPECT_EQ(steps, accepted.load());
}

}  // namespace
}  // namespace tandem_test
