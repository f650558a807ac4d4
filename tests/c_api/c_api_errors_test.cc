// Every C API function's error paths: NULL handles and out-pointers, wrong shape, wrong
// dtype, unknown names, models that fail to load, bad options. Each returns a status with
// a clear message; run under AddressSanitizer (tandem_c_api_asan_tests) nothing leaks.
#include <cstdio>
#include <fstream>

#include "tests/c_api/c_api_helpers.h"

namespace tandem_test {
namespace {

constexpr TandemCode kBad = TANDEM_INVALID_ARGUMENT;

TEST(CApiErrors, NullArgumentsAreNamed) {
  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  std::vector<float> x(6);
  TensorPtr t = Wrap(x, 2, 3);
  size_t n = 0;
  int64_t i64 = 0;
  const char* str = nullptr;
  void* ptr = nullptr;
  TandemDataType dtype;
  TandemDeviceType device;
  int flag = 0;
  double d = 0;
  TandemTensor* out = nullptr;
  EXPECT_TANDEM_ERROR(tandem_env_create(TANDEM_API_VERSION, nullptr), kBad, "'out' is NULL");
  EXPECT_TANDEM_ERROR(tandem_env_provider_available(nullptr, "cpu", &flag, nullptr), kBad, "'env'");
  EXPECT_TANDEM_ERROR(tandem_env_provider_available(env.get(), nullptr, &flag, nullptr), kBad, "'name'");
  EXPECT_TANDEM_ERROR(tandem_tensor_create(TANDEM_FLOAT, nullptr, 0, nullptr), kBad, "'out'");
  EXPECT_TANDEM_ERROR(tandem_tensor_wrap(TANDEM_FLOAT, nullptr, 0, nullptr, 4, nullptr), kBad, "'out'");
  EXPECT_TANDEM_ERROR(tandem_tensor_dtype(nullptr, &dtype), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_tensor_rank(nullptr, &n), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_tensor_dims(nullptr, &i64, 1), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_tensor_byte_size(nullptr, &n), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_tensor_device(nullptr, &device, nullptr), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_tensor_data(nullptr, &ptr), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_tensor_data(t.get(), nullptr), kBad, "'data'");
  EXPECT_TANDEM_ERROR(tandem_session_options_create(nullptr), kBad, "'out'");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_providers(nullptr, nullptr, 0), kBad, "'options'");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_threads(nullptr, 1), kBad, "'options'");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_optimization_level(nullptr, 1), kBad, "'options'");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_profiling(nullptr, 1), kBad, "'options'");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_outputs_on_device(nullptr, 1), kBad, "'options'");
  TandemSession* raw = nullptr;
  EXPECT_TANDEM_ERROR(tandem_session_create(nullptr, "m.onnx", nullptr, &raw), kBad, "'env'");
  EXPECT_TANDEM_ERROR(tandem_session_create(env.get(), nullptr, nullptr, &raw), kBad, "'model_path'");
  EXPECT_TANDEM_ERROR(tandem_session_create(env.get(), "m.onnx", nullptr, nullptr), kBad, "'out'");
  EXPECT_TANDEM_ERROR(tandem_session_create_from_memory(env.get(), nullptr, 0, nullptr, &raw), kBad, "'data'");
  EXPECT_TANDEM_ERROR(tandem_session_io_count(nullptr, TANDEM_INPUTS, &n), kBad, "'s'");
  EXPECT_TANDEM_ERROR(tandem_session_io_name(nullptr, TANDEM_INPUTS, 0, &str), kBad, "'session'");
  EXPECT_TANDEM_ERROR(tandem_session_io_dtype(s.get(), TANDEM_INPUTS, 0, nullptr), kBad, "'dtype'");
  EXPECT_TANDEM_ERROR(tandem_session_io_rank(s.get(), TANDEM_INPUTS, 0, nullptr), kBad, "'rank'");
  EXPECT_TANDEM_ERROR(tandem_session_io_dim(s.get(), TANDEM_INPUTS, 0, 0, nullptr, nullptr), kBad, "'value'");
  EXPECT_TANDEM_ERROR(tandem_session_run(nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr), kBad, "'s'");
  EXPECT_TANDEM_ERROR(tandem_session_tensor_to_device(s.get(), nullptr, &out), kBad, "'t'");
  EXPECT_TANDEM_ERROR(tandem_session_tensor_to_host(nullptr, t.get(), &out), kBad, "'s'");
  EXPECT_TANDEM_ERROR(tandem_session_profile(s.get(), nullptr), kBad, "'json'");
  EXPECT_TANDEM_ERROR(tandem_io_binding_create(nullptr, nullptr), kBad, "'s'");
  EXPECT_TANDEM_ERROR(tandem_io_binding_bind_input(nullptr, "x", t.get()), kBad, "'b'");
  EXPECT_TANDEM_ERROR(tandem_io_binding_bind_output(nullptr, "y", t.get()), kBad, "'b'");
  EXPECT_TANDEM_ERROR(tandem_session_run_with_binding(s.get(), nullptr), kBad, "'b'");
  EXPECT_TANDEM_ERROR(tandem_io_binding_output(nullptr, "y", &out), kBad, "'b'");
  EXPECT_TANDEM_ERROR(tandem_training_options_create(nullptr), kBad, "'out'");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(nullptr, "lr", "1"), kBad, "'options'");
  TandemTrainingSession* ts = nullptr;
  EXPECT_TANDEM_ERROR(tandem_training_session_create(env.get(), nullptr, nullptr, &ts), kBad, "'model_path'");
  EXPECT_TANDEM_ERROR(tandem_training_session_input_count(nullptr, &n), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_input_name(nullptr, 0, &str), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_output_count(nullptr, &n), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_train_step(nullptr, nullptr, nullptr, 0, t.get(), &d), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_eval_step(nullptr, nullptr, nullptr, 0, t.get(), &d, &d), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_predict(nullptr, nullptr, nullptr, 0, 1, &out), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_set_learning_rate(nullptr, 0.1), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_learning_rate(nullptr, &d), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_steps(nullptr, &i64), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_save_checkpoint(nullptr, "c"), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_load_checkpoint(nullptr, "c"), kBad, "'ts'");
  EXPECT_TANDEM_ERROR(tandem_training_session_export(nullptr, "m"), kBad, "'ts'");
  // Release functions accept NULL.
  tandem_status_release(nullptr);
  tandem_env_release(nullptr);
  tandem_tensor_release(nullptr);
  tandem_session_options_release(nullptr);
  tandem_session_release(nullptr);
  tandem_io_binding_release(nullptr);
  tandem_training_options_release(nullptr);
  tandem_training_session_release(nullptr);
  tandem_free(nullptr);
  EXPECT_EQ(tandem_status_code(nullptr), TANDEM_OK);
  EXPECT_STREQ(tandem_status_message(nullptr), "");
}

TEST(CApiErrors, WrongShapeDtypeAndNames) {
  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  std::vector<float> x(8);
  TensorPtr wrong_shape = Wrap(x, 2, 4);
  TensorPtr good = Wrap(x, 2, 3);
  int64_t dims[2] = {2, 3};
  TandemTensor* ints = nullptr;
  ASSERT_TANDEM_OK(tandem_tensor_create(TANDEM_INT64, dims, 2, &ints));
  TensorPtr hold(ints);
  const char* x_name[] = {"x"};
  const char* bad_name[] = {"nope"};
  const TandemTensor* shape_in[] = {wrong_shape.get()};
  const TandemTensor* int_in[] = {ints};
  const TandemTensor* good_in[] = {good.get()};
  TandemTensor* out = nullptr;
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), x_name, shape_in, 1, nullptr, 1, &out), kBad,
                      "input 'x' has shape [2,4], the model expects [batch,3]");
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), x_name, int_in, 1, nullptr, 1, &out), kBad,
                      "input 'x' has type int64, the model expects float");
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), bad_name, good_in, 1, nullptr, 1, &out),
                      TANDEM_NOT_FOUND, "no input named 'nope'");
  const char* two_names[] = {"x", "nope"};
  const TandemTensor* two_in[] = {good.get(), good.get()};
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), two_names, two_in, 2, nullptr, 1, &out),
                      TANDEM_NOT_FOUND, "no input named 'nope'");
  const char* twice[] = {"x", "x"};
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), twice, two_in, 2, nullptr, 1, &out), kBad, "given twice");
  const char* no_output[] = {"nope"};
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), x_name, good_in, 1, no_output, 1, &out), TANDEM_NOT_FOUND,
                      "no output named 'nope'");
  EXPECT_TANDEM_ERROR(tandem_session_run(s.get(), x_name, good_in, 1, nullptr, 2, &out), kBad,
                      "output_count must be the model's 1 outputs");
  EXPECT_EQ(out, nullptr);  // untouched on error
  EXPECT_TANDEM_ERROR(tandem_session_io_name(s.get(), TANDEM_INPUTS, 5, nullptr), kBad, "'name'");
  const char* name = nullptr;
  EXPECT_TANDEM_ERROR(tandem_session_io_name(s.get(), TANDEM_OUTPUTS, 5, &name), kBad,
                      "output index 5 is out of range");
  int64_t v = 0;
  EXPECT_TANDEM_ERROR(tandem_session_io_dim(s.get(), TANDEM_INPUTS, 0, 7, &v, nullptr), kBad, "has no axis 7");
  // Tensors: bad shapes, sizes, types; dims capacity.
  int64_t negative[1] = {-2};
  TandemTensor* t = nullptr;
  EXPECT_TANDEM_ERROR(tandem_tensor_create(TANDEM_FLOAT, negative, 1, &t), kBad, "negative");
  EXPECT_TANDEM_ERROR(tandem_tensor_create(static_cast<TandemDataType>(99), dims, 2, &t), kBad,
                      "unknown data type 99");
  EXPECT_TANDEM_ERROR(tandem_tensor_create(TANDEM_STRING, dims, 2, &t), TANDEM_UNIMPLEMENTED, "string");
  EXPECT_TANDEM_ERROR(tandem_tensor_wrap(TANDEM_FLOAT, dims, 2, x.data(), 8, &t), kBad,
                      "8 bytes given, the shape [2,3] needs 24");
  int64_t huge[3] = {1 << 30, 1 << 30, 1 << 30};
  EXPECT_TANDEM_ERROR(tandem_tensor_create(TANDEM_FLOAT, huge, 3, &t), kBad, "too large");
  int64_t one[1];
  EXPECT_TANDEM_ERROR(tandem_tensor_dims(good.get(), one, 1), kBad, "capacity 1 < rank 2");
  TandemDataType view_type;
  size_t view_rank = 0, view_bytes;
  void* view_data;
  EXPECT_TANDEM_ERROR(tandem_tensor_host_view(good.get(), &view_type, &view_rank, one, 1,
                                              &view_data, &view_bytes),
                      kBad, "capacity 1 < rank 2");
  EXPECT_EQ(view_rank, 2u);  // set before the error, so the caller can retry with room
  EXPECT_EQ(t, nullptr);
  // IO binding: unknown names, wrong shapes; a binding of another session.
  TandemIoBinding* b = nullptr;
  ASSERT_TANDEM_OK(tandem_io_binding_create(s.get(), &b));
  EXPECT_TANDEM_ERROR(tandem_io_binding_bind_input(b, "nope", good.get()), TANDEM_NOT_FOUND, "no input named 'nope'");
  EXPECT_TANDEM_ERROR(tandem_io_binding_bind_input(b, "x", wrong_shape.get()), kBad, "'x' has shape [2,4]");
  EXPECT_TANDEM_ERROR(tandem_io_binding_bind_output(b, "nope", good.get()), TANDEM_NOT_FOUND, "no output named");
  EXPECT_TANDEM_ERROR(tandem_io_binding_output(b, "nope", &out), TANDEM_NOT_FOUND, "no result for 'nope'");
  EXPECT_TANDEM_ERROR(tandem_session_run_with_binding(s.get(), b), kBad, "missing input 'x'");
  SessionPtr other = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  EXPECT_TANDEM_ERROR(tandem_session_run_with_binding(other.get(), b), kBad, "another session");
  tandem_io_binding_release(b);
}

TEST(CApiErrors, ModelsThatFailToLoad) {
  EnvPtr env = MakeEnv();
  TandemSession* s = nullptr;
  EXPECT_TANDEM_ERROR(tandem_session_create(env.get(), "/no/such/model.onnx", nullptr, &s), TANDEM_NOT_FOUND,
                      "/no/such/model.onnx: cannot open file");
  std::string garbage = ::testing::TempDir() + "/c_api_garbage.onnx";
  {
    std::ofstream f(garbage, std::ios::binary);
    f << "this is not a protobuf \x01\x02\xff\xfe";
  }
  EXPECT_TANDEM_ERROR(tandem_session_create(env.get(), garbage.c_str(), nullptr, &s), TANDEM_INVALID_MODEL,
                      "c_api_garbage.onnx");
  const char junk[] = "\x0a\xff\xff\xff\xff\x0f";
  EXPECT_TANDEM_ERROR(tandem_session_create_from_memory(env.get(), junk, sizeof junk, nullptr, &s),
                      TANDEM_INVALID_MODEL, "<memory>");
  TandemTrainingSession* ts = nullptr;
  EXPECT_TANDEM_ERROR(tandem_training_session_create(env.get(), garbage.c_str(), nullptr, &ts),
                      TANDEM_INVALID_MODEL, "c_api_garbage.onnx");
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(ts, nullptr);
  std::remove(garbage.c_str());
  // A provider that cannot run here is refused when the session is made.
  TandemSessionOptions* o = nullptr;
  ASSERT_TANDEM_OK(tandem_session_options_create(&o));
  const char* providers[] = {"no_such_device"};
  const char* path_like[] = {"../evil"};
  EXPECT_TANDEM_OK(tandem_session_options_set_providers(o, path_like, 1));
  EXPECT_TANDEM_ERROR(tandem_session_create(env.get(), ModelPath("ode_mlp.onnx").c_str(), o, &s),
                      TANDEM_UNAVAILABLE, "is not a provider name");
  EXPECT_TANDEM_OK(tandem_session_options_set_providers(o, providers, 1));
  EXPECT_TANDEM_ERROR(tandem_session_create(env.get(), ModelPath("ode_mlp.onnx").c_str(), o, &s),
                      TANDEM_UNAVAILABLE, "no_such_device");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_threads(o, -1), kBad, "threads must be >= 0");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_optimization_level(o, 3), kBad, "level must be 0, 1 or 2");
  EXPECT_TANDEM_ERROR(tandem_session_options_set_providers(o, providers, 0), kBad, "no provider given");
  tandem_session_options_release(o);
  TandemEnv* newer = nullptr;
  EXPECT_TANDEM_ERROR(tandem_env_create(TANDEM_API_VERSION + 1, &newer), TANDEM_UNIMPLEMENTED,
                      "built for API version");
}

TEST(CApiErrors, TrainingOptionsAndCalls) {
  EnvPtr env = MakeEnv();
  TandemTrainingOptions* o = nullptr;
  ASSERT_TANDEM_OK(tandem_training_options_create(&o));
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "learning_rate", "0.1"), kBad,
                      "unknown training option 'learning_rate'");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "lr", "fast"), kBad, "'lr' wants a number, got 'fast'");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "warmup_steps", "-3"), kBad, "integer >= 0");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "optimizer", "lbfgs"), kBad, "lbfgs");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "loss", "hinge"), kBad, "hinge");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "device", "tpu"), kBad, "'device' must be");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "lr", nullptr), kBad, "'value'");
  EXPECT_TANDEM_ERROR(tandem_training_options_set(o, "profiling", "yes"), kBad, "'profiling' must be 0 or 1");
  TandemTrainingSession* raw = nullptr;
  ASSERT_TANDEM_OK(tandem_training_session_create(env.get(), ModelPath("ode_mlp.onnx").c_str(), o, &raw));
  tandem_training_options_release(o);
  TrainingPtr ts(raw);
  std::vector<float> x(6), y(6), y_bad(4);
  TensorPtr xt = Wrap(x, 2, 3), yt = Wrap(y, 2, 3), y_wrong = Wrap(y_bad, 2, 2);
  const char* names[] = {"x"};
  const char* bad[] = {"nope"};
  const TandemTensor* in[] = {xt.get()};
  double loss = 0;
  EXPECT_TANDEM_ERROR(tandem_training_session_train_step(ts.get(), bad, in, 1, yt.get(), &loss),
                      TANDEM_NOT_FOUND, "no input named 'nope'");
  EXPECT_TANDEM_ERROR(tandem_training_session_train_step(ts.get(), names, in, 1, y_wrong.get(), &loss), kBad,
                      "input 'target' has shape [2,2]");
  // A target that would broadcast ([2,1], or [1,3] against a batch of 2) is refused too.
  std::vector<float> y_col(2), y_row(3);
  TensorPtr col = Wrap(y_col, 2, 1), row = Wrap(y_row, 1, 3);
  EXPECT_TANDEM_ERROR(tandem_training_session_train_step(ts.get(), names, in, 1, col.get(), &loss), kBad,
                      "input 'target' has shape [2,1]");
  EXPECT_TANDEM_ERROR(tandem_training_session_train_step(ts.get(), names, in, 1, row.get(), &loss), kBad,
                      "('batch') is 1 but input 'x' gave it 2");
  EXPECT_TANDEM_ERROR(tandem_training_session_train_step(ts.get(), names, in, 1, nullptr, &loss), kBad, "'target'");
  EXPECT_TANDEM_ERROR(tandem_training_session_eval_step(ts.get(), names, in, 1, y_wrong.get(), &loss, nullptr),
                      kBad, "the target has shape [2,2], the prediction [2,3]");
  TandemTensor* outs[2] = {nullptr, nullptr};
  EXPECT_TANDEM_ERROR(tandem_training_session_predict(ts.get(), names, in, 1, 2, outs), kBad,
                      "output_count must be the model's 1 outputs");
  EXPECT_TANDEM_ERROR(tandem_training_session_set_learning_rate(ts.get(), -1), kBad, "learning rate");
  EXPECT_TANDEM_ERROR(tandem_training_session_load_checkpoint(ts.get(), "/no/such.tdm"), TANDEM_NOT_FOUND,
                      "/no/such.tdm");
  EXPECT_TANDEM_ERROR(tandem_training_session_export(ts.get(), "/no/such/dir/m.onnx"), TANDEM_NOT_FOUND,
                      "cannot write /no/such/dir/m.onnx");
  const char* name = nullptr;
  EXPECT_TANDEM_ERROR(tandem_training_session_input_name(ts.get(), 3, &name), kBad, "out of range");
  int64_t steps = -1;
  EXPECT_TANDEM_OK(tandem_training_session_steps(ts.get(), &steps));
  EXPECT_EQ(steps, 0);  // no failed call took a step
}

}  // namespace
}  // namespace tandem_test
