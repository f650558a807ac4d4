// cpp_serving: dynamic batching in front of a tandem::Session.
//
//   usage: cpp_serving MODEL.onnx [--requests N] [--clients N] [--max-batch N]
//                                 [--max-wait-us N] [--threads N] [--workers N]
//
// Client threads (--clients, default 64) each submit single-sample requests to a server
// and wait on a std::future. The server's worker thread takes the oldest request, then
// waits until --max-batch (default 32) requests are queued or --max-wait-us (default 500)
// has passed since that request arrived, stacks what it has into one batch, runs the
// session once and hands each client its row of every output (--workers N: N such
// threads on one queue; default 1). The same requests are also run one at a time (each
// client calling Session::Run on a batch of 1, concurrently: a Session is thread-safe).
// The program reports latency percentiles and throughput of both, their throughput
// ratio, and checks that every batched answer equals the one-at-a-time answer for the
// same request (within 1e-5, relative above 1). --threads: the session's intra-op
// threads (default 1; 0 = all cores).
//
// Any model works whose inputs are all float with a symbolic (batch) first dimension and
// fixed other dimensions, and whose outputs have the batch as first dimension, e.g.
// models/ode_mlp.onnx (x[batch,3] -> y[batch,3]) and models/peaks_mlp.onnx.
// Exit code: 0 when everything ran and matched, 1 on a mismatch or error, 2 on bad usage.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <future>
#include <iostream>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <tandem/tandem.hpp>

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string model;
  int requests = 20000;
  int clients = 64;
  int max_batch = 32;
  int max_wait_us = 500;
  int threads = 1;  // intra-op threads of the session (0 = all cores)
  int workers = 1;  // batching worker threads
};

// One model input: its name and the shape of one sample (the dims after the batch).
struct InputSpec {
  std::string name;
  std::vector<int64_t> sample_dims;
  size_t sample_size = 1;
};

struct Request {
  std::vector<std::vector<float>> inputs;  // one sample per model input
};

struct Response {
  std::vector<std::vector<float>> outputs;  // one row per model output
};

// Checks the model fits this example and describes its inputs.
std::vector<InputSpec> DescribeModel(const tandem::Session& session) {
  std::vector<InputSpec> specs;
  for (const tandem::IoInfo& in : session.inputs()) {
    if (in.dtype != TANDEM_FLOAT || in.rank < 1 || in.dims[0] >= 0)
      throw std::runtime_error("input '" + in.name + "' is " + in.ToString() +
                               ": this example needs float inputs with a symbolic batch dimension first");
    InputSpec spec;
    spec.name = in.name;
    for (size_t a = 1; a < in.dims.size(); ++a) {
      if (in.dims[a] < 0)
        throw std::runtime_error("input '" + in.name + "' is " + in.ToString() +
                                 ": only the first dimension may be symbolic");
      spec.sample_dims.push_back(in.dims[a]);
      spec.sample_size *= static_cast<size_t>(in.dims[a]);
    }
    specs.push_back(spec);
  }
  if (specs.empty()) throw std::runtime_error("the model has no inputs");
  return specs;
}

// Runs `requests` as one batch: row i of every input is request i's sample; row i of
// every output is response i's.
std::vector<Response> RunBatch(tandem::Session& session, const std::vector<InputSpec>& specs,
                               const std::vector<const Request*>& requests) {
  const int64_t n = static_cast<int64_t>(requests.size());
  if (n == 0) return {};
  std::vector<tandem::Tensor> tensors;
  tandem::Feeds feeds;
  tensors.reserve(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    std::vector<int64_t> dims{n};
    dims.insert(dims.end(), specs[i].sample_dims.begin(), specs[i].sample_dims.end());
    tensors.push_back(tandem::Tensor::Create<float>(dims));
    float* dst = tensors.back().data<float>();
    for (int64_t r = 0; r < n; ++r)
      std::copy(requests[r]->inputs[i].begin(), requests[r]->inputs[i].end(), dst + r * specs[i].sample_size);
  }
  for (size_t i = 0; i < specs.size(); ++i) feeds.emplace_back(specs[i].name, &tensors[i]);

  std::vector<tandem::Tensor> outputs = session.Run(feeds);
  std::vector<Response> responses(requests.size());
  for (tandem::Tensor& out : outputs) {
    const std::vector<int64_t> dims = out.dims();
    if (dims.empty() || dims[0] != n)
      throw std::runtime_error("an output does not have the batch (" + std::to_string(n) + ") as first dimension");
    const float* src = out.data<float>();
    const size_t row = static_cast<size_t>(out.numel() / n);
    for (int64_t r = 0; r < n; ++r) responses[r].outputs.emplace_back(src + r * row, src + (r + 1) * row);
  }
  return responses;
}

// The batching server: Submit() from any thread; one worker thread runs the batches.
class BatchingServer {
 public:
  BatchingServer(tandem::Session& session, std::vector<InputSpec> specs, int max_batch,
                 std::chrono::microseconds max_wait, int workers = 1)
      : session_(session), specs_(std::move(specs)), max_batch_(static_cast<size_t>(max_batch)),
        max_wait_(max_wait) {
    for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { Loop(); });
  }

  ~BatchingServer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& w : workers_) w.join();  // they serve what is still queued, then end
  }

  // `request` must stay valid until the future is ready.
  std::future<Response> Submit(const Request& request) {
    Pending p{&request, std::promise<Response>(), Clock::now()};
    std::future<Response> f = p.promise.get_future();
    size_t queued = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(p));
      queued = queue_.size();
    }
    // A worker waits for a first request, then for a full batch.
    if (queued >= max_batch_) cv_.notify_all();
    else if (queued == 1) cv_.notify_one();
    return f;
  }

  size_t batches() const { return batches_; }
  size_t served() const { return served_; }

 private:
  struct Pending {
    const Request* request;
    std::promise<Response> promise;
    Clock::time_point arrived;
  };

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and nothing left
      const Clock::time_point deadline = queue_.front().arrived + max_wait_;
      cv_.wait_until(lock, deadline, [this] { return stop_ || queue_.size() >= max_batch_; });

      std::vector<Pending> batch;
      while (!queue_.empty() && batch.size() < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (batch.empty()) continue;  // another worker took them while this one waited
      lock.unlock();
      Serve(batch);
      lock.lock();
    }
  }

  void Serve(std::vector<Pending>& batch) {
    std::vector<const Request*> requests;
    for (const Pending& p : batch) requests.push_back(p.request);
    // Counted before the answers go out, so a client that has its answer sees the count.
    ++batches_;
    served_ += batch.size();
    try {
      std::vector<Response> responses = RunBatch(session_, specs_, requests);
      for (size_t i = 0; i < batch.size(); ++i) batch[i].promise.set_value(std::move(responses[i]));
    } catch (...) {
      for (Pending& p : batch) p.promise.set_exception(std::current_exception());
    }
  }

  tandem::Session& session_;
  const std::vector<InputSpec> specs_;
  const size_t max_batch_;
  const std::chrono::microseconds max_wait_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  std::atomic<size_t> batches_{0};
  std::atomic<size_t> served_{0};
  std::vector<std::thread> workers_;
};

struct Measurement {
  std::vector<Response> answers;     // by request index
  std::vector<double> latencies_us;  // by request index
  double seconds = 0;
};

// `clients` threads; client c handles requests c, c + clients, ...; `serve(request)`
// answers one request and blocks until it is answered.
template <typename Serve>
Measurement Measure(const std::vector<Request>& requests, int clients, Serve serve) {
  Measurement m;
  m.answers.resize(requests.size());
  m.latencies_us.resize(requests.size());
  std::vector<std::thread> threads;
  std::exception_ptr error;
  std::mutex error_mu;
  const Clock::time_point start = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      try {
        for (size_t r = static_cast<size_t>(c); r < requests.size(); r += static_cast<size_t>(clients)) {
          const Clock::time_point t0 = Clock::now();
          m.answers[r] = serve(requests[r]);
          m.latencies_us[r] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (error) std::rethrow_exception(error);
  return m;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

void PrintRow(const char* mode, const Measurement& m, double mean_batch) {
  std::printf("%-15s %12.0f %10.1f %10.1f %11.2f\n", mode, static_cast<double>(m.answers.size()) / m.seconds,
              Percentile(m.latencies_us, 0.50), Percentile(m.latencies_us, 0.99), mean_batch);
}

int ParsePositive(const std::string& flag, const std::string& text, int min) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min || v > 100000000) {
    std::fprintf(stderr, "error: %s needs an integer >= %d, got '%s'\n", flag.c_str(), min, text.c_str());
    std::exit(2);
  }
  return static_cast<int>(v);
}

Config ParseArgs(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") {
      std::puts("usage: cpp_serving MODEL.onnx [--requests N] [--clients N] [--max-batch N]\n"
                "                              [--max-wait-us N] [--threads N] [--workers N]\n"
                "Serves single-sample requests batched by a worker and one at a time; prints\n"
                "latency (p50/p99), throughput and their ratio, and checks the answers agree.");
      std::exit(0);
    }
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0) {
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        std::fprintf(stderr, "error: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      if (arg == "--requests") c.requests = ParsePositive(arg, value, 1);
      else if (arg == "--clients") c.clients = ParsePositive(arg, value, 1);
      else if (arg == "--max-batch") c.max_batch = ParsePositive(arg, value, 1);
      else if (arg == "--max-wait-us") c.max_wait_us = ParsePositive(arg, value, 0);
      else if (arg == "--threads") c.threads = ParsePositive(arg, value, 0);
      else if (arg == "--workers") c.workers = ParsePositive(arg, value, 1);
      else {
        std::fprintf(stderr, "error: unknown flag %s\n", arg.c_str());
        std::exit(2);
      }
    } else if (c.model.empty()) {
      c.model = arg;
    } else {
      std::fprintf(stderr, "error: unexpected argument '%s'\n", arg.c_str());
      std::exit(2);
    }
  }
  if (c.model.empty()) {
    std::fprintf(stderr,
                 "usage: %s MODEL.onnx [--requests N] [--clients N] [--max-batch N] [--max-wait-us N] "
                 "[--threads N] [--workers N]\n",
                 argv[0]);
    std::exit(2);
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = ParseArgs(argc, argv);
  try {
    tandem::Env env;
    tandem::SessionOptions options;
    options.SetThreads(cfg.threads);
    tandem::Session session(env, cfg.model, options);
    const std::vector<InputSpec> specs = DescribeModel(session);

    std::printf("model: %s (tandem %s)\n", cfg.model.c_str(), tandem::Version().c_str());
    for (const tandem::IoInfo& io : session.inputs()) std::printf("  input  %-12s %s\n", io.name.c_str(), io.ToString().c_str());
    for (const tandem::IoInfo& io : session.outputs()) std::printf("  output %-12s %s\n", io.name.c_str(), io.ToString().c_str());
    std::printf("requests %d, clients %d, max batch %d, max wait %d us, session threads %d, batching workers %d\n",
                cfg.requests, cfg.clients, cfg.max_batch, cfg.max_wait_us, cfg.threads, cfg.workers);

    // Deterministic requests: uniform values in [-2, 2].
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
    std::vector<Request> requests(static_cast<size_t>(cfg.requests));
    for (Request& r : requests)
      for (const InputSpec& s : specs) {
        std::vector<float> sample(s.sample_size);
        for (float& v : sample) v = uniform(rng);
        r.inputs.push_back(std::move(sample));
      }

    auto one_at_a_time = [&](const Request& r) { return RunBatch(session, specs, {&r}).front(); };

    // Warm-up, so neither measurement pays first-run costs: a full batch, and a few
    // rounds of concurrent single runs (the session prepares a plan per concurrent call).
    {
      std::vector<const Request*> warm;
      for (size_t i = 0; i < requests.size() && i < static_cast<size_t>(cfg.max_batch); ++i) warm.push_back(&requests[i]);
      RunBatch(session, specs, warm);
      const size_t n = std::min(requests.size(), static_cast<size_t>(cfg.clients) * 4);
      Measure(std::vector<Request>(requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(n)), cfg.clients,
              one_at_a_time);
    }

    const Measurement single = Measure(requests, cfg.clients, one_at_a_time);
    Measurement batched;
    size_t batches = 0, served = 0;
    {
      BatchingServer server(session, specs, cfg.max_batch, std::chrono::microseconds(cfg.max_wait_us), cfg.workers);
      batched = Measure(requests, cfg.clients, [&](const Request& r) { return server.Submit(r).get(); });
      batches = server.batches();
      served = server.served();
    }

    std::printf("\n%-15s %12s %10s %10s %11s\n", "mode", "requests/s", "p50 us", "p99 us", "mean batch");
    PrintRow("one-at-a-time", single, 1.0);
    PrintRow("batched", batched, batches > 0 ? static_cast<double>(served) / static_cast<double>(batches) : 0.0);
    const double ratio = (static_cast<double>(requests.size()) / batched.seconds) /
                         (static_cast<double>(requests.size()) / single.seconds);
    std::printf("throughput ratio (batched / one-at-a-time): %.2fx\n", ratio);

    // Every batched answer against the one-at-a-time answer for the same request.
    const double tol = 1e-5;
    size_t mismatches = 0;
    double max_diff = 0;
    for (size_t r = 0; r < requests.size(); ++r) {
      const Response& a = batched.answers[r];
      const Response& b = single.answers[r];
      bool same = a.outputs.size() == b.outputs.size();
      for (size_t o = 0; same && o < a.outputs.size(); ++o) {
        same = a.outputs[o].size() == b.outputs[o].size();
        for (size_t k = 0; same && k < a.outputs[o].size(); ++k) {
          const double d = std::fabs(static_cast<double>(a.outputs[o][k]) - b.outputs[o][k]);
          max_diff = std::max(max_diff, d);
          if (!(d <= tol * std::max(1.0, std::fabs(static_cast<double>(b.outputs[o][k]))))) same = false;
        }
      }
      if (!same && ++mismatches <= 5) std::fprintf(stderr, "mismatch: request %zu\n", r);
    }
    if (mismatches > 0) {
      std::printf("answers: %zu of %zu batched answers DIFFER from the one-at-a-time answers (tolerance %g)\n",
                  mismatches, requests.size(), tol);
      return 1;
    }
    std::printf("answers: all %zu batched answers equal the one-at-a-time answers (max |diff| %.3g, tolerance %g)\n",
                requests.size(), max_diff, tol);
    return 0;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "tandem error (code %d): %s\n", static_cast<int>(e.code()), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
