// The C API's inference calls through libtandem.so: metadata, Run against a float64
// reference, sessions from memory, IO binding, device transfers, profiles, and one
// session Run from 8 threads at once.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>

#include "onnx_import/export.h"
#include "tests/c_api/c_api_helpers.h"

namespace tandem_test {
namespace {

std::vector<float> Inputs(int64_t rows, int64_t cols, int seed) {
  std::vector<float> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * (i + 1) + seed) * 1.5f;
  return x;
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::abs(want[i])) << "element " << i;
}

TEST(CApi, VersionAndEnvironment) {
  EXPECT_STREQ(tandem_version(), "0.1.0");
  EXPECT_EQ(tandem_api_version(), static_cast<uint32_t>(TANDEM_API_VERSION));
  EnvPtr env = MakeEnv();
  int available = -1;
  const char* why = nullptr;
  EXPECT_TANDEM_OK(tandem_env_provider_available(env.get(), "cpu", &available, &why));
  EXPECT_EQ(available, 1);
  EXPECT_TANDEM_OK(tandem_env_provider_available(env.get(), "no_such_device", &available, &why));
  EXPECT_EQ(available, 0);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why), "");
}

TEST(CApi, MetadataNamesTypesAndSymbolicDims) {
  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  ASSERT_TRUE(s);
  size_t n_in = 0, n_out = 0;
  EXPECT_TANDEM_OK(tandem_session_io_count(s.get(), TANDEM_INPUTS, &n_in));
  EXPECT_TANDEM_OK(tandem_session_io_count(s.get(), TANDEM_OUTPUTS, &n_out));
  ASSERT_EQ(n_in, 1u);
  ASSERT_EQ(n_out, 1u);
  const char* name = nullptr;
  EXPECT_TANDEM_OK(tandem_session_io_name(s.get(), TANDEM_INPUTS, 0, &name));
  EXPECT_STREQ(name, "x");
  TandemDataType dtype = TANDEM_UNDEFINED;
  EXPECT_TANDEM_OK(tandem_session_io_dtype(s.get(), TANDEM_INPUTS, 0, &dtype));
  EXPECT_EQ(dtype, TANDEM_FLOAT);
  int64_t rank = 0, value = 0;
  EXPECT_TANDEM_OK(tandem_session_io_rank(s.get(), TANDEM_INPUTS, 0, &rank));
  EXPECT_EQ(rank, 2);
  const char* symbol = nullptr;
  EXPECT_TANDEM_OK(tandem_session_io_dim(s.get(), TANDEM_INPUTS, 0, 0, &value, &symbol));
  EXPECT_EQ(value, -1);
  ASSERT_NE(symbol, nullptr);
  EXPECT_STREQ(symbol, "batch");
  EXPECT_TANDEM_OK(tandem_session_io_dim(s.get(), TANDEM_INPUTS, 0, 1, &value, &symbol));
  EXPECT_EQ(value, 3);
  EXPECT_EQ(symbol, nullptr);
}

TEST(CApi, RunMatchesFloat64Reference) {
  EnvPtr env = MakeEnv();
  for (const char* model : {"ode_mlp.onnx", "peaks_mlp.onnx"}) {
    SCOPED_TRACE(model);
    SessionPtr s = MakeSession(env.get(), ModelPath(model));
    ASSERT_TRUE(s);
    ReferenceMlp ref = ReferenceMlp::Load(ModelPath(model));
    int64_t cols = ref.layers.front().in;
    std::vector<float> x = Inputs(5, cols, 1);
    TensorPtr in = Wrap(x, 5, cols);
    const char* names[] = {"x"};
    const TandemTensor* inputs[] = {in.get()};
    TandemTensor* out = nullptr;
    ASSERT_TANDEM_OK(tandem_session_run(s.get(), names, inputs, 1, nullptr, 1, &out));
    TensorPtr hold(out);
    int64_t dims[2] = {0, 0};
    EXPECT_TANDEM_OK(tandem_tensor_dims(out, dims, 2));
    EXPECT_EQ(dims[0], 5);
    EXPECT_EQ(dims[1], ref.layers.back().out);
    ExpectNear(Values(out), ref.Forward(x, 5));
    // The one-call view agrees with the single getters.
    TandemDataType dtype = TANDEM_UNDEFINED;
    size_t rank = 0, bytes = 0;
    int64_t view_dims[2] = {0, 0};
    void* data = nullptr;
    EXPECT_TANDEM_OK(tandem_tensor_host_view(out, &dtype, &rank, view_dims, 2, &data, &bytes));
    EXPECT_EQ(dtype, TANDEM_FLOAT);
    EXPECT_EQ(rank, 2u);
    EXPECT_EQ(view_dims[0], dims[0]);
    EXPECT_EQ(view_dims[1], dims[1]);
    EXPECT_EQ(bytes, static_cast<size_t>(dims[0] * dims[1]) * sizeof(float));
    void* direct = nullptr;
    EXPECT_TANDEM_OK(tandem_tensor_data(out, &direct));
    EXPECT_EQ(data, direct);
    // The input was wrapped, not copied: the caller's buffer is read as it is now.
    x.assign(x.size(), 0.25f);
    const char* output_name = nullptr;
    EXPECT_TANDEM_OK(tandem_session_io_name(s.get(), TANDEM_OUTPUTS, 0, &output_name));
    TandemTensor* again = nullptr;
    ASSERT_TANDEM_OK(tandem_session_run(s.get(), names, inputs, 1, &output_name, 1, &again));
    TensorPtr hold2(again);
    ExpectNear(Values(again), ref.Forward(x, 5));
  }
}

TEST(CApi, SessionFromMemoryEqualsSessionFromFile) {
  EnvPtr env = MakeEnv();
  std::ifstream f(ModelPath("ode_mlp.onnx"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  TandemSession* raw = nullptr;
  ASSERT_TANDEM_OK(tandem_session_create_from_memory(env.get(), bytes.data(), bytes.size(), nullptr, &raw));
  SessionPtr from_memory(raw);
  SessionPtr from_file = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  std::vector<float> x = Inputs(3, 3, 2);
  TensorPtr in = Wrap(x, 3, 3);
  const char* names[] = {"x"};
  const TandemTensor* inputs[] = {in.get()};
  TandemTensor *a = nullptr, *b = nullptr;
  ASSERT_TANDEM_OK(tandem_session_run(from_memory.get(), names, inputs, 1, nullptr, 1, &a));
  ASSERT_TANDEM_OK(tandem_session_run(from_file.get(), names, inputs, 1, nullptr, 1, &b));
  TensorPtr ha(a), hb(b);
  EXPECT_EQ(Values(a), Values(b));
}

// 8 threads x 1000 Run calls on one session, each thread with its own batch size and
// data: every result equals the single-threaded result bit for bit.
TEST(CApi, ConcurrentRunsEqualSingleThreadedRuns) {
  EnvPtr env = MakeEnv();
  TandemSessionOptions* o = nullptr;
  ASSERT_TANDEM_OK(tandem_session_options_create(&o));
  EXPECT_TANDEM_OK(tandem_session_options_set_threads(o, 1));
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"), o);
  tandem_session_options_release(o);
  ASSERT_TRUE(s);
  constexpr int kThreads = 8, kRuns = 1000;
  std::vector<std::vector<float>> x(kThreads), expected(kThreads);
  const char* names[] = {"x"};
  for (int t = 0; t < kThreads; ++t) {
    x[t] = Inputs(t + 1, 3, 10 + t);
    TensorPtr in = Wrap(x[t], t + 1, 3);
    const TandemTensor* inputs[] = {in.get()};
    TandemTensor* out = nullptr;
    ASSERT_TANDEM_OK(tandem_session_run(s.get(), names, inputs, 1, nullptr, 1, &out));
    expected[t] = Values(out);
    tandem_tensor_release(out);
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      TensorPtr in = Wrap(x[t], t + 1, 3);
      const TandemTensor* inputs[] = {in.get()};
      for (int r = 0; r < kRuns; ++r) {
        TandemTensor* out = nullptr;
        TandemStatus* st = tandem_session_run(s.get(), names, inputs, 1, nullptr, 1, &out);
        if (st) {
          ++failures;
          tandem_status_release(st);
          continue;
        }
        if (Values(out) != expected[t]) ++mismatches;
        tandem_tensor_release(out);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CApi, IoBindingKeepsInputsAndFillsBoundOutputs) {
  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  ReferenceMlp ref = ReferenceMlp::Load(ModelPath("ode_mlp.onnx"));
  TandemIoBinding* b = nullptr;
  ASSERT_TANDEM_OK(tandem_io_binding_create(s.get(), &b));
  std::vector<float> x = Inputs(4, 3, 3), y(4 * 3, -7.f);
  TensorPtr in = Wrap(x, 4, 3), out = Wrap(y, 4, 3);
  EXPECT_TANDEM_OK(tandem_io_binding_bind_input(b, "x", in.get()));
  const char* output_name = nullptr;
  EXPECT_TANDEM_OK(tandem_session_io_name(s.get(), TANDEM_OUTPUTS, 0, &output_name));
  EXPECT_TANDEM_OK(tandem_io_binding_bind_output(b, output_name, out.get()));
  for (int run = 0; run < 3; ++run) {
    x[0] = 0.1f * run;  // the bound input is the caller's memory, read at each run
    ASSERT_TANDEM_OK(tandem_session_run_with_binding(s.get(), b));
    std::vector<double> want = ref.Forward(x, 4);
    ExpectNear(y, want);
    TandemTensor* latest = nullptr;
    ASSERT_TANDEM_OK(tandem_io_binding_output(b, output_name, &latest));
    EXPECT_EQ(Values(latest), y);
    tandem_tensor_release(latest);
  }
  // A bound output of the wrong shape is refused when bound.
  std::vector<float> small(3);
  TensorPtr wrong = Wrap(small, 1, 3);
  std::vector<float> wrong_cols(8);
  TensorPtr wrong2 = Wrap(wrong_cols, 2, 4);
  EXPECT_TANDEM_ERROR(tandem_io_binding_bind_output(b, output_name, wrong2.get()),
                      TANDEM_INVALID_ARGUMENT, "has shape [2,4]");
  // Binding the batch-1 tensor is legal (batch is symbolic) but the result of a batch-4
  // run does not fit it: the run says so and names the output.
  EXPECT_TANDEM_OK(tandem_io_binding_bind_output(b, output_name, wrong.get()));
  EXPECT_TANDEM_ERROR(tandem_session_run_with_binding(s.get(), b), TANDEM_INVALID_ARGUMENT,
                      std::string("output '") + output_name + "'");
  tandem_io_binding_release(b);
}

// A model whose outputs are Identity(x) and Identity(weight): the caller gets copies, so
// writing into an output changes neither the caller's input nor the model.
TEST(CApi, OutputsNeverAliasInputsOrWeights) {
  tandem::Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back({"x", tandem::DataType::kFloat, tandem::Shape::Of({2})});
  g.initializers["w"] = tandem::Tensor::FromVector<float>({5.f, 6.f}, {2});
  g.nodes.push_back({"id_x", "Identity", "", {"x"}, {"y"}, {}, ""});
  g.nodes.push_back({"id_w", "Identity", "", {"w"}, {"v"}, {}, ""});
  g.outputs.push_back({"y", tandem::DataType::kFloat, tandem::Shape::Of({2})});
  g.outputs.push_back({"v", tandem::DataType::kFloat, tandem::Shape::Of({2})});
  std::string path = ::testing::TempDir() + "/c_api_identity.onnx";
  ASSERT_TRUE(tandem::ExportModelFile(g, path).ok());
  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), path);
  ASSERT_TRUE(s);
  std::vector<float> x = {1.f, 2.f};
  int64_t dims[1] = {2};
  TandemTensor* in = nullptr;
  ASSERT_TANDEM_OK(tandem_tensor_wrap(TANDEM_FLOAT, dims, 1, x.data(), 8, &in));
  TensorPtr hin(in);
  const char* names[] = {"x"};
  const TandemTensor* inputs[] = {in};
  for (int round = 0; round < 2; ++round) {
    TandemTensor* out[2] = {nullptr, nullptr};
    ASSERT_TANDEM_OK(tandem_session_run(s.get(), names, inputs, 1, nullptr, 2, out));
    TensorPtr y(out[0]), v(out[1]);
    EXPECT_EQ(Values(out[0]), x);
    EXPECT_EQ(Values(out[1]), (std::vector<float>{5.f, 6.f}));  // round 1: the write below did not stick
    void* data = nullptr;
    EXPECT_TANDEM_OK(tandem_tensor_data(out[0], &data));
    EXPECT_NE(data, x.data());
    static_cast<float*>(data)[0] = -1.f;
    EXPECT_TANDEM_OK(tandem_tensor_data(out[1], &data));
    static_cast<float*>(data)[0] = -1.f;
    EXPECT_EQ(x[0], 1.f);
  }
  // The same through an IO binding's unbound outputs.
  TandemIoBinding* b = nullptr;
  ASSERT_TANDEM_OK(tandem_io_binding_create(s.get(), &b));
  EXPECT_TANDEM_OK(tandem_io_binding_bind_input(b, "x", in));
  ASSERT_TANDEM_OK(tandem_session_run_with_binding(s.get(), b));
  TandemTensor* y = nullptr;
  ASSERT_TANDEM_OK(tandem_io_binding_output(b, "y", &y));
  void* data = nullptr;
  EXPECT_TANDEM_OK(tandem_tensor_data(y, &data));
  EXPECT_NE(data, x.data());
  tandem_tensor_release(y);
  tandem_io_binding_release(b);
  std::remove(path.c_str());
}

TEST(CApi, DeviceTransfersOnTheCpuShareMemory) {
  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  std::vector<float> x = Inputs(2, 3, 4);
  TensorPtr in = Wrap(x, 2, 3);
  TandemTensor *dev = nullptr, *host = nullptr;
  ASSERT_TANDEM_OK(tandem_session_tensor_to_device(s.get(), in.get(), &dev));
  ASSERT_TANDEM_OK(tandem_session_tensor_to_host(s.get(), dev, &host));
  TensorPtr hd(dev), hh(host);
  TandemDeviceType type = TANDEM_DEVICE_CUDA;
  int index = -1;
  EXPECT_TANDEM_OK(tandem_tensor_device(dev, &type, &index));
  EXPECT_EQ(type, TANDEM_DEVICE_CPU);
  void* data = nullptr;
  EXPECT_TANDEM_OK(tandem_tensor_data(host, &data));
  EXPECT_EQ(data, x.data());
}

// API version 2's calls for sharing memory with other libraries (DLPack), as far as they
// go without a GPU: a device tensor over caller memory is made without touching the
// device, says where it lives and gives its address; a CPU session has no stream, orders
// nothing, and refuses a device input with a message instead of reading it.
TEST(CApi, DeviceMemoryFromOtherLibrariesWithoutAGpu) {
  alignas(64) static float device_stand_in[6];  // never read: the address is all that is used
  const int64_t dims[2] = {2, 3};
  TandemTensor* wrapped = nullptr;
  ASSERT_TANDEM_OK(tandem_tensor_wrap_device(TANDEM_FLOAT, dims, 2, TANDEM_DEVICE_CUDA, 1, device_stand_in,
                                             sizeof device_stand_in, &wrapped));
  TensorPtr dev(wrapped);
  TandemDeviceType type = TANDEM_DEVICE_CPU;
  int index = -1;
  EXPECT_TANDEM_OK(tandem_tensor_device(dev.get(), &type, &index));
  EXPECT_EQ(type, TANDEM_DEVICE_CUDA);
  EXPECT_EQ(index, 1);
  void* address = nullptr;
  EXPECT_TANDEM_OK(tandem_tensor_address(dev.get(), &address));
  EXPECT_EQ(address, device_stand_in);
  void* data = nullptr;
  EXPECT_TANDEM_ERROR(tandem_tensor_data(dev.get(), &data), TANDEM_FAILED_PRECONDITION, "cuda:1");
  TandemTensor* refused = nullptr;
  EXPECT_TANDEM_ERROR(tandem_tensor_wrap_device(TANDEM_FLOAT, dims, 2, TANDEM_DEVICE_CPU, 0, device_stand_in,
                                                sizeof device_stand_in, &refused),
                      TANDEM_INVALID_ARGUMENT, "tandem_tensor_wrap");
  EXPECT_TANDEM_ERROR(tandem_tensor_wrap_device(TANDEM_FLOAT, dims, 2, TANDEM_DEVICE_CUDA, 0, device_stand_in, 8,
                                                &refused),
                      TANDEM_INVALID_ARGUMENT, "needs 24");
  EXPECT_EQ(refused, nullptr);

  EnvPtr env = MakeEnv();
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"));
  void* stream = &address;
  EXPECT_TANDEM_OK(tandem_session_device_stream(s.get(), &stream));
  EXPECT_EQ(stream, nullptr) << "a CPU session has no stream";
  EXPECT_TANDEM_OK(tandem_session_order_before(s.get(), reinterpret_cast<void*>(1)));
  const int64_t xdims[2] = {2, 3};
  ASSERT_TANDEM_OK(tandem_tensor_wrap_device(TANDEM_FLOAT, xdims, 2, TANDEM_DEVICE_CUDA, 0, device_stand_in,
                                             sizeof device_stand_in, &wrapped));
  TensorPtr x(wrapped);
  const char* in_names[1] = {"x"};
  TandemTensor* ins[1] = {x.get()};
  const char* out_names[1] = {"y"};
  TandemTensor* outs[1] = {nullptr};
  TandemStatus* st = tandem_session_run(s.get(), in_names, ins, 1, out_names, 1, outs);
  ASSERT_NE(st, nullptr) << "a CPU session read memory on cuda:0";
  EXPECT_NE(std::string(tandem_status_message(st)).find("cuda:0"), std::string::npos) << tandem_status_message(st);
  tandem_status_release(st);
  EXPECT_EQ(outs[0], nullptr);
}

TEST(CApi, ProfileCountsEveryNode) {
  EnvPtr env = MakeEnv();
  TandemSessionOptions* o = nullptr;
  ASSERT_TANDEM_OK(tandem_session_options_create(&o));
  EXPECT_TANDEM_OK(tandem_session_options_set_profiling(o, 1));
  EXPECT_TANDEM_OK(tandem_session_options_set_optimization_level(o, 0));
  SessionPtr s = MakeSession(env.get(), ModelPath("ode_mlp.onnx"), o);
  tandem_session_options_release(o);
  std::vector<float> x = Inputs(2, 3, 5);
  TensorPtr in = Wrap(x, 2, 3);
  const char* names[] = {"x"};
  const TandemTensor* inputs[] = {in.get()};
  for (int i = 0; i < 3; ++i) {
    TandemTensor* out = nullptr;
    ASSERT_TANDEM_OK(tandem_session_run(s.get(), names, inputs, 1, nullptr, 1, &out));
    tandem_tensor_release(out);
  }
  char* json = nullptr;
  ASSERT_TANDEM_OK(tandem_session_profile(s.get(), &json));
  std::string text = json;
  tandem_free(json);
  EXPECT_NE(text.find("\"op\": \"Gemm\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"op\": \"Tanh\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"calls\": 3"), std::string::npos) << text;
}

}  // namespace
}  // namespace tandem_test
