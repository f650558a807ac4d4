// C API per-call overhead: the 3-100-3 tanh MLP (models/ode_mlp.onnx) at batch 1, one
// thread, timed four ways in the same process:
//   kernels     the sum of the nodes' own times (a profiled session, per run)
//   C++ Run     tandem::Session::Run (the engine's API, no C layer)
//   C API run   tandem_session_run (wrapping, name lookup, status, output handles)
//   C API bind  tandem_session_run_with_binding (inputs bound once)
// Three interleaved rounds (drift hits every variant alike); prints the lowest min and
// the median of the rounds' medians, and the C API's overhead above
// the kernels and above Session::Run. usage: tandem_c_api_bench [MODEL] [--calls N] [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "tandem/tandem.h"

namespace {

using Clock = std::chrono::steady_clock;

void Check(TandemStatus* s) {
  if (!s) return;
  std::fprintf(stderr, "error: %s\n", tandem_status_message(s));
  std::exit(1);
}

// Microseconds per call: min and median over `reps` repetitions of `calls` calls.
std::pair<double, double> Time(int reps, int calls, const std::function<void()>& call) {
  for (int i = 0; i < calls / 10; ++i) call();  // warm-up
  std::vector<double> per_call;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    per_call.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return {per_call.front(), per_call[per_call.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  std::string model = std::string(TANDEM_SOURCE_DIR) + "/models/ode_mlp.onnx";
  int calls = 20000, reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help")) {
      std::puts("usage: tandem_c_api_bench [MODEL.onnx] [--calls N] [--reps R]\n"
                "Times one batch-1 inference through the C API, the C++ Session and the kernels alone.");
      return 0;
    }
    if (!std::strcmp(argv[i], "--calls") && i + 1 < argc) calls = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    else model = argv[i];
  }

  // C++ sessions: plain, and profiled for the kernels' own time.
  tandem::SessionOptions so;
  so.num_threads = 1;
  auto cpp = tandem::Session::Load(model, so);
  so.profiling = true;
  auto profiled = tandem::Session::Load(model, so);
  if (!cpp.ok() || !profiled.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string((cpp.ok() ? profiled.status() : cpp.status()).message()).c_str());
    return 1;
  }
  const tandem::ValueInfo& in = (*cpp)->inputs()[0];
  tandem::Dims dims;
  for (const auto& d : in.shape.dims) dims.push_back(d.known() ? d.value : 1);
  tandem::Tensor x = tandem::Tensor::Host(in.dtype, dims);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 0.1f * (i + 1);
  std::map<std::string, tandem::Tensor> feeds = {{in.name, x}};

  // C API session over the same data (wrapped, no copy).
  TandemEnv* env = nullptr;
  Check(tandem_env_create(TANDEM_API_VERSION, &env));
  TandemSessionOptions* opts = nullptr;
  Check(tandem_session_options_create(&opts));
  Check(tandem_session_options_set_threads(opts, 1));
  TandemSession* session = nullptr;
  Check(tandem_session_create(env, model.c_str(), opts, &session));
  TandemTensor* input = nullptr;
  Check(tandem_tensor_wrap(TANDEM_FLOAT, dims.data(), dims.size(), x.raw(), x.bytes(), &input));
  const char* names[] = {in.name.c_str()};
  const TandemTensor* inputs[] = {input};
  TandemIoBinding* binding = nullptr;
  Check(tandem_io_binding_create(session, &binding));
  Check(tandem_io_binding_bind_input(binding, in.name.c_str(), input));

  auto c_run = [&] {
    TandemTensor* out = nullptr;
    Check(tandem_session_run(session, names, inputs, 1, nullptr, 1, &out));
    tandem_tensor_release(out);
  };
  auto c_bind = [&] { Check(tandem_session_run_with_binding(session, binding)); };
  auto cpp_run = [&] {
    auto r = (*cpp)->Run(feeds);
    if (!r.ok()) std::exit(1);
  };
  auto prof_run = [&] {
    auto r = (*profiled)->Run(feeds);
    if (!r.ok()) std::exit(1);
  };

  // Kernel time: the profiled session's node times per run (its own rounds, below).
  auto node_time = [&] {
    double us = 0;
    int64_t runs = 0;
    for (const auto& p : (*profiled)->profile()) {
      us += p.total_us;
      runs = std::max(runs, p.calls);
    }
    return std::make_pair(us, runs);
  };
  std::vector<double> kernel_us;
  // Interleaved rounds so that drift (frequency, other load) hits every variant alike.
  std::vector<double> cpp_min, cpp_med, c_min, c_med, bind_min, bind_med;
  for (int round = 0; round < 3; ++round) {
    auto before = node_time();
    Time(reps, calls, prof_run);
    auto after = node_time();
    kernel_us.push_back((after.first - before.first) / std::max<int64_t>(1, after.second - before.second));
    auto a = Time(reps, calls, cpp_run), b = Time(reps, calls, c_run), c = Time(reps, calls, c_bind);
    cpp_min.push_back(a.first), cpp_med.push_back(a.second);
    c_min.push_back(b.first), c_med.push_back(b.second);
    bind_min.push_back(c.first), bind_med.push_back(c.second);
  }
  auto lowest = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  auto middle = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::pair<double, double> kernels{lowest(kernel_us), middle(kernel_us)};
  std::pair<double, double> cpp_t{lowest(cpp_min), middle(cpp_med)}, c_t{lowest(c_min), middle(c_med)},
      bind_t{lowest(bind_min), middle(bind_med)};

  std::printf("C API overhead, %s, batch %lld, 1 thread, 3 rounds x %d reps x %d calls (us per call)\n",
              model.c_str(), static_cast<long long>(dims.empty() ? 1 : dims[0]), reps, calls);
  std::printf("  %-22s %9s %9s\n", "", "min", "median");
  std::printf("  %-22s %9.3f %9.3f   (sum of node times, profiled session)\n", "kernels", kernels.first,
              kernels.second);
  std::printf("  %-22s %9.3f %9.3f\n", "C++ Session::Run", cpp_t.first, cpp_t.second);
  std::printf("  %-22s %9.3f %9.3f\n", "C API session_run", c_t.first, c_t.second);
  std::printf("  %-22s %9.3f %9.3f\n", "C API run_with_binding", bind_t.first, bind_t.second);
  std::printf("C API above the kernels: %.3f us (min), %.3f us (median); goal < 2 us\n",
              c_t.first - kernels.first, c_t.second - kernels.second);
  std::printf("C API above C++ Session::Run: %.3f us (min), %.3f us (median)\n",
              c_t.first - cpp_t.first, c_t.second - cpp_t.second);

  tandem_io_binding_release(binding);
  tandem_tensor_release(input);
  tandem_session_release(session);
  tandem_session_options_release(opts);
  tandem_env_release(env);
  return 0;
}
