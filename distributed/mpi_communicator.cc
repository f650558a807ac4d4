#include "distributed/mpi_communicator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "distributed/mpi_plugin_abi.h"
#include "framework/plugin/plugin_search.h"

namespace tandem {
namespace {

constexpr size_t kErr = 512;

// The line a rank prints when the launcher ends it with SIGTERM (another rank died),
// formatted ahead, since a signal handler may only write it.
char term_line[512];
volatile sig_atomic_t term_line_length = 0;

void WriteTermLine(int rank, const std::string& context) {
  term_line_length = 0;
  const int n = std::snprintf(term_line, sizeof term_line,
                              "error: [distributed] rank %d: ended by the launcher%s%s (another rank stopped)\n", rank,
                              context.empty() ? "" : " at ", context.c_str());
  term_line_length = n < 0 ? 0 : std::min<int>(n, sizeof term_line - 1);
}

void OnTerm(int) {
  if (term_line_length > 0) {
    const ssize_t ignored = write(STDERR_FILENO, term_line, static_cast<size_t>(term_line_length));
    (void)ignored;
  }
  _exit(143);
}

class PluginCommunicator final : public Communicator {
 public:
  PluginCommunicator(const TandemMpiPlugin* api, int rank, int size, int local_rank, std::string description,
                     double timeout)
      : api_(api), rank_(rank), size_(size), local_rank_(local_rank), description_(std::move(description)),
        timeout_(timeout), watchdog_([this] { Watch(); }), worker_([this] { Work(); }) {}
  ~PluginCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      stop_worker_ = true;
    }
    cv_.notify_all();
    queue_cv_.notify_all();
    watchdog_.join();
    worker_.join();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string description() const override { return description_; }
  void SetContext(const std::string& context) override {
    std::lock_guard<std::mutex> lock(mu_);
    context_ = context;
    WriteTermLine(rank_, context_);
  }
  std::string context() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return context_;
  }
  double timeout_seconds() const override { return timeout_; }

  absl::Status AllReduceSum(float* data, int64_t count) override {
    return Enqueue("all-reduce", [=](char* err) { return api_->allreduce_sum_f32(data, count, err, kErr); }).get();
  }
  absl::Status AllReduceSum(double* data, int64_t count) override {
    return Enqueue("all-reduce", [=](char* err) { return api_->allreduce_sum_f64(data, count, err, kErr); }).get();
  }
  absl::Status Broadcast(void* data, int64_t bytes, int root) override {
    return Enqueue("broadcast", [=](char* err) { return api_->broadcast(data, bytes, root, err, kErr); }).get();
  }
  absl::Status Barrier() override {
    return Enqueue("barrier", [=](char* err) { return api_->barrier(err, kErr); }).get();
  }
  absl::Status StartAllReduceSum(float* data, int64_t count) override {
    auto done = Enqueue("all-reduce", [=](char* err) { return api_->allreduce_sum_f32(data, count, err, kErr); });
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (!started_.emplace(data, std::move(done)).second)
      return absl::FailedPreconditionError("[distributed] an all-reduce of this buffer is already under way");
    return absl::OkStatus();
  }
  absl::Status WaitAllReduce(const float* data) override {
    std::future<absl::Status> done;
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      auto it = started_.find(data);
      if (it == started_.end()) return absl::FailedPreconditionError("[distributed] no all-reduce of this buffer was started");
      done = std::move(it->second);
      started_.erase(it);
    }
    return done.get();
  }
  [[noreturn]] void Abort(const std::string& message) override {
    term_line_length = 0;  // this rank has said why; the launcher's SIGTERM adds nothing
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
    api_->abort(1);
    std::_Exit(1);  // MPI_Abort does not return; should it, end this process at least
  }

 private:
  template <typename F>
  absl::Status Run(const char* what, F&& call) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      what_ = what;
      started_at_ = std::chrono::steady_clock::now();
      busy_ = true;
    }
    cv_.notify_all();
    char err[kErr] = {0};
    const int rc = call(err);
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    if (rc != 0)
      return absl::UnavailableError("[distributed] rank " + std::to_string(rank_) + ": " + what + " failed: " + err);
    return absl::OkStatus();
  }

  // Every MPI call runs on the worker thread, in the order the calls were made: the same
  // order on every rank, and one call at a time (MPI_THREAD_SERIALIZED), while the
  // calling thread goes on after StartAllReduceSum.
  std::future<absl::Status> Enqueue(const char* what, std::function<int(char*)> call) {
    auto job = std::make_shared<Job>();
    job->what = what;
    job->call = std::move(call);
    std::future<absl::Status> done = job->done.get_future();
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      queue_.push_back(std::move(job));
    }
    queue_cv_.notify_one();
    return done;
  }

  void Work() {
    while (true) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(queue_mu_);
        queue_cv_.wait(lock, [this] { return stop_worker_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job->done.set_value(Run(job->what, job->call));
    }
  }

  // Ends the job when a collective outlasts the timeout.
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (!busy_) {
        cv_.wait(lock);
        continue;
      }
      const auto deadline = started_at_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                           std::chrono::duration<double>(timeout_));
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && busy_ &&
          std::chrono::steady_clock::now() >= deadline) {
        char line[512];
        std::snprintf(line, sizeof line,
                      "error: [distributed] rank %d: %s%s%s waited %.0f s for the other ranks (one of them died or "
                      "hangs); ending the job",
                      rank_, what_, context_.empty() ? "" : " at ", context_.c_str(), timeout_);
        lock.unlock();
        Abort(line);
      }
    }
  }

  const TandemMpiPlugin* api_;
  const int rank_, size_, local_rank_;
  const std::string description_;
  const double timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool busy_ = false, stop_ = false;
  const char* what_ = "";
  std::string context_;
  std::chrono::steady_clock::time_point started_at_;
  struct Job {
    const char* what;
    std::function<int(char*)> call;
    std::promise<absl::Status> done;
  };
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_worker_ = false;
  std::map<const float*, std::future<absl::Status>> started_;  // StartAllReduceSum's, until WaitAllReduce
  std::thread watchdog_, worker_;  // last: started once the rest is set
};

double TimeoutFromEnv(double given) {
  if (const char* v = std::getenv("TANDEM_DISTRIBUTED_TIMEOUT"); v && *v) {
    const double t = std::atof(v);
    if (t > 0) return t;
  }
  return given > 0 ? given : 30.0;
}

}  // namespace

absl::StatusOr<Communicator*> ConnectMpi(double timeout_seconds) {
  static std::mutex mu;
  static PluginCommunicator* connected = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (connected) return connected;
  // RTLD_GLOBAL: Open MPI's own modules, which libmpi loads, resolve symbols of libmpi.
  OpenedPlugin opened = OpenPlugin("libtandem_mpi.so", RTLD_NOW | RTLD_GLOBAL, "MPI support (libopenmpi-dev)");
  if (!opened.handle) return absl::UnavailableError("[distributed] cannot load MPI support: " + opened.why);
  auto entry = reinterpret_cast<TandemMpiPluginEntry>(dlsym(opened.handle, TANDEM_MPI_PLUGIN_ENTRY));
  const TandemMpiPlugin* api = entry ? entry() : nullptr;
  if (!api || api->abi_version != TANDEM_MPI_PLUGIN_ABI)
    return absl::UnavailableError("[distributed] " + opened.path + " was built from another version of Tandem");
  int rank = 0, size = 0, local = 0;
  char version[256] = {0}, host[256] = {0}, err[kErr] = {0};
  if (api->init(&rank, &size, &local, version, sizeof version, host, sizeof host, err, sizeof err) != 0)
    return absl::UnavailableError(std::string("[distributed] ") + err);
  const std::string description = std::string(version) + ", rank " + std::to_string(rank) + " of " +
                                  std::to_string(size) + " on " + host;
  // Kept until the process exits, which finalizes MPI (every rank must, or the launcher
  // reports the job as failed).
  connected = new PluginCommunicator(api, rank, size, local, description, TimeoutFromEnv(timeout_seconds));
  static const TandemMpiPlugin* finalize_api = api;
  std::atexit([] { finalize_api->finalize(); });
  SetProcessCommunicator(connected);  // the group the AllReduce kernels reduce across
  WriteTermLine(rank, "");
  struct sigaction term = {};
  term.sa_handler = OnTerm;
  sigaction(SIGTERM, &term, nullptr);
  return connected;
}

}  // namespace tandem
