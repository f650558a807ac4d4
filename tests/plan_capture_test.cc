// Device graphs (runtime/plan_capture.h) checked without a GPU: a stand-in device whose
// kernels, like CUDA's, only enqueue their work (closures over raw pointers) on a stream
// that runs when the host waits for it; while capturing, the closures are recorded
// instead, and a replay enqueues the recording again, reading and writing the very
// buffers of the recorded run. A plan that recorded the wrong buffers, let one go, or
// skipped an input copy computes wrong numbers here (and the sanitizers see freed memory
// being written). Expected values are computed in the test from the inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

#include "framework/copy_kernel.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

constexpr Device kRecDevice{DeviceType::kCuda, 6};

// What the stand-in device did, for the tests to read.
struct RecStats {
  int captures = 0, replays = 0, launches = 0;
};
RecStats g_stats;

// Blocks released while work that may use them is still queued: freed once it has run
// (a CUDA caching allocator reuses a block only in stream order, to the same effect).
struct DeferredFrees {
  std::vector<void*> blocks;
  ~DeferredFrees() {
    for (void* p : blocks) std::free(p);
  }
};

// The device's stream: work runs in order when the host waits (Copy to the host,
// Synchronize); while capturing it is recorded.
struct Stream {
  std::vector<std::function<void()>> pending;
  std::vector<std::function<void()>>* recording = nullptr;
  std::shared_ptr<DeferredFrees> frees = std::make_shared<DeferredFrees>();
  void Enqueue(std::function<void()> f) {
    ++g_stats.launches;
    if (recording) recording->push_back(std::move(f));
    else pending.push_back(std::move(f));
  }
  void Drain() {
    for (auto& f : pending) f();
    pending.clear();
    for (void* p : frees->blocks) std::free(p);
    frees->blocks.clear();
  }
  ~Stream() { Drain(); }
};

// Host memory tagged as the device. While a pool is open, blocks stay allocated until the
// pool is gone (the recording keeps its memory, as CudaAllocator's private pools do).
class RecAllocator : public Allocator {
 public:
  explicit RecAllocator(Stream& s) : frees_(s.frees) {}
  Device device() const override { return kRecDevice; }
  std::shared_ptr<Buffer> Allocate(size_t bytes) override {
    auto b = std::make_shared<Buffer>();
    b->data = std::malloc(bytes ? bytes : 1);
    b->bytes = bytes;
    b->device = kRecDevice;
    std::weak_ptr<Pool> pool = open_;
    std::weak_ptr<DeferredFrees> frees = frees_;
    b->release = [pool, frees](Buffer& buf) {
      if (auto p = pool.lock()) p->kept.push_back(buf.data);
      else if (auto f = frees.lock()) f->blocks.push_back(buf.data);
      else std::free(buf.data);
    };
    return b;
  }
  size_t bytes_in_use() const override { return 0; }
  size_t peak_bytes() const override { return 0; }
  struct Pool {
    std::vector<void*> kept;
    ~Pool() {
      for (void* p : kept) std::free(p);
    }
  };
  std::shared_ptr<Pool> open_;

 private:
  std::shared_ptr<DeferredFrees> frees_;
};

class RecGraph : public DeviceGraph {
 public:
  RecGraph(Stream& s, std::vector<std::function<void()>> work, std::shared_ptr<RecAllocator::Pool> pool)
      : stream_(s), work_(std::move(work)), pool_(std::move(pool)) {}
  absl::Status Replay() override {
    ++g_stats.replays;
    for (auto& f : work_) stream_.Enqueue(f);
    return absl::OkStatus();
  }

 private:
  Stream& stream_;
  std::vector<std::function<void()>> work_;
  std::shared_ptr<RecAllocator::Pool> pool_;
};

class RecProvider;
RecProvider* g_provider = nullptr;  // the session's, for its kernels

class RecProvider : public ExecutionProvider {
 public:
  RecProvider() { g_provider = this; }
  std::string name() const override { return "rec"; }
  Device device() const override { return kRecDevice; }
  Allocator& allocator() override { return allocator_; }
  const KernelRegistry& registry() const override;
  absl::Status Copy(const Tensor& src, Tensor& dst) override {
    if (src.bytes() != dst.bytes()) return absl::InvalidArgumentError("size mismatch");
    const size_t n = src.bytes();
    const bool from_host = src.device().type == DeviceType::kCpu, to_host = dst.device().type == DeviceType::kCpu;
    if (stream.recording && (from_host || to_host)) return absl::FailedPreconditionError("host copy while capturing");
    if (to_host) {
      stream.Drain();
      std::memcpy(dst.raw(), src.raw(), n);
    } else if (from_host) {  // staged: the host buffer may change once this returns
      auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src.raw()),
                                                        static_cast<const char*>(src.raw()) + n);
      void* d = dst.raw();
      stream.Enqueue([staged, d, n] { std::memcpy(d, staged->data(), n); });
    } else {
      const void* s = src.raw();
      void* d = dst.raw();
      stream.Enqueue([s, d, n] { std::memcpy(d, s, n); });
    }
    return absl::OkStatus();
  }
  absl::Status Synchronize() override {
    stream.Drain();
    return absl::OkStatus();
  }
  bool SupportsCapture() const override { return true; }
  absl::Status BeginCapture() override {
    ++g_stats.captures;
    allocator_.open_ = std::make_shared<RecAllocator::Pool>();
    recorded_.clear();
    stream.recording = &recorded_;
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<DeviceGraph>> EndCapture() override {
    stream.recording = nullptr;
    auto pool = std::move(allocator_.open_);
    return std::unique_ptr<DeviceGraph>(new RecGraph(stream, std::move(recorded_), std::move(pool)));
  }
  Stream stream;

 private:
  RecAllocator allocator_{stream};
  std::vector<std::function<void()>> recorded_;
};

// Elementwise float kernels whose work is enqueued: y = f(a, b).
class Binary : public Kernel {
 public:
  explicit Binary(std::function<float(float, float)> f) : f_(std::move(f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    const Tensor* b = ctx.num_inputs() > 1 ? ctx.input(1) : nullptr;
    if (b && b->numel() != a.numel()) return absl::InvalidArgumentError("shapes differ");
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, a.dims());
    const float* pa = a.data<float>();
    const float* pb = b ? b->data<float>() : nullptr;
    float* py = y.data<float>();
    const int64_t n = a.numel();
    auto f = f_;
    g_provider->stream.Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], pb ? pb[i] : 0.f);
    });
    return absl::OkStatus();
  }

 private:
  std::function<float(float, float)> f_;
};

// Reshape with its shape read on the host: a copy into the new dims.
class Reshape : public Kernel {
 public:
  explicit Reshape(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& shape = *ctx.input(1);
    Dims dims(shape.data<int64_t>(), shape.data<int64_t>() + shape.numel());
    Tensor& y = ctx.AllocateOutput(0, DataType::kFloat, dims);
    if (y.numel() != x.numel()) return absl::InvalidArgumentError("bad shape");
    const float* s = x.data<float>();
    float* d = y.data<float>();
    const size_t n = x.bytes();
    g_provider->stream.Enqueue([=] { std::memcpy(d, s, n); });
    return absl::OkStatus();
  }
};

// test.Accumulate(param, x): param += x in place, output aliases param (an optimizer's way).
class Accumulate : public Kernel {
 public:
  explicit Accumulate(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& p = *ctx.input(0);
    float* pp = const_cast<float*>(p.data<float>());
    const float* px = ctx.input(1)->data<float>();
    const int64_t n = p.numel();
    g_provider->stream.Enqueue([=] {
      for (int64_t i = 0; i < n; ++i) pp[i] += px[i];
    });
    ctx.SetOutput(0, p);
    return absl::OkStatus();
  }
};

// test.Fragile: the identity, but it refuses to be recorded (as a kernel that must wait for
// the device would).
class Fragile : public Kernel {
 public:
  explicit Fragile(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    if (g_provider->stream.recording) return absl::FailedPreconditionError("Fragile cannot be recorded");
    return Binary([](float a, float) { return a; }).Compute(ctx);
  }
};

const KernelRegistry& RecProvider::registry() const {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterCopyKernel(*reg);
    auto add = [&](const std::string& domain, const std::string& op, KernelFactory f) {
      KernelDef d;
      d.domain = domain;
      d.op = op;
      d.types = {DataType::kFloat};
      d.create = std::move(f);
      if (op == "Reshape") d.host_inputs = {1};
      if (op == "Accumulate") d.updates_inputs_in_place = true;
      reg->Add(std::move(d));
    };
    auto binary = [](std::function<float(float, float)> f) -> KernelFactory {
      return [f](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<Kernel>> {
        return std::unique_ptr<Kernel>(new Binary(f));
      };
    };
    add("", "Mul", binary([](float a, float b) { return a * b; }));
    add("", "Add", binary([](float a, float b) { return a + b; }));
    add("", "Relu", binary([](float a, float) { return a > 0.f ? a : 0.f; }));
    add("", "Reshape", Make<Reshape>());
    add("test", "Accumulate", Make<Accumulate>());
    add("test", "Fragile", Make<Fragile>());
    return reg;
  }();
  return *r;
}

ValueInfo FloatInput(const std::string& name, int64_t cols) {
  Shape s;
  s.rank_known = true;
  s.dims = {Dim{-1, "N"}, Dim{cols, ""}};
  return ValueInfo{name, DataType::kFloat, s};
}

Tensor Values(Dims dims, float scale, float offset) {
  Tensor t = Tensor::Host(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = testing::InitializerValue(i, scale, offset);
  return t;
}

Node MakeNode(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
              const std::string& domain = "") {
  Node n;
  n.name = op + "_" + out[0];
  n.op_type = op;
  n.domain = domain;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// y = Reshape(Relu(x * w + b), Shape(x)) with x [N, 4], constants w and b; the Shape runs
// on the host (the device has no kernel for it): shape arithmetic the recording skips.
Graph AffineGraph() {
  Graph g;
  g.opsets[""] = 17;
  g.inputs = {FloatInput("x", 4)};
  g.outputs = {ValueInfo{"y", DataType::kFloat, Shape::Unknown()}};
  g.initializers["w"] = Values({4}, 0.5f, 0.25f);
  g.initializers["b"] = Values({4}, -0.3f, 0.1f);
  g.nodes.push_back(MakeNode("Mul", {"x", "w4"}, {"xw"}));
  g.nodes.push_back(MakeNode("Add", {"xw", "b4"}, {"z"}));
  g.nodes.push_back(MakeNode("Relu", {"z"}, {"r"}));
  g.nodes.push_back(MakeNode("Shape", {"x"}, {"shape"}));
  g.nodes.push_back(MakeNode("Reshape", {"r", "shape"}, {"y"}));
  return g;
}

// What AffineGraph computes, from the inputs (w and b broadcast by hand: the kernels are
// elementwise, so the test feeds w and b already at x's size).
std::vector<float> Affine(const Tensor& x, const Tensor& w, const Tensor& b) {
  std::vector<float> y(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = std::max(0.f, x.data<float>()[i] * w.data<float>()[i] + b.data<float>()[i]);
  return y;
}

class PlanCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterProviderFactory("rec", [] { return std::unique_ptr<ExecutionProvider>(new RecProvider()); });
    g_stats = RecStats{};
  }
  std::unique_ptr<Session> Open(Graph g, bool device_graphs = true, bool profiling = false) {
    SessionOptions o;
    o.providers = {"rec", "cpu"};
    o.num_threads = 1;
    o.constant_folding = false;
    o.device_graphs = device_graphs;
    o.profiling = profiling;
    auto s = Session::FromGraph(std::move(g), o);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
};

// w and b as x-sized constants (the stand-in kernels do not broadcast).
Graph AffineGraphFor(int64_t rows) {
  Graph g = AffineGraph();
  g.initializers["w4"] = Values({rows, 4}, 0.5f, 0.25f);
  g.initializers["b4"] = Values({rows, 4}, -0.3f, 0.1f);
  g.initializers.erase("w");
  g.initializers.erase("b");
  return g;
}

void ExpectValues(const Tensor& got, const std::vector<float>& want) {
  ASSERT_EQ(got.device().type, DeviceType::kCpu);
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_FLOAT_EQ(got.data<float>()[i], want[i]) << i;
}

TEST_F(PlanCaptureTest, ReplaysComputeEachRunsInputs) {
  auto s = Open(AffineGraphFor(3));
  ASSERT_TRUE(s);
  const Tensor w = Values({3, 4}, 0.5f, 0.25f), b = Values({3, 4}, -0.3f, 0.1f);
  std::vector<Tensor> kept;
  for (int run = 0; run < 6; ++run) {
    Tensor x = Values({3, 4}, 1.f + run, -0.5f * run);
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[0], Affine(x, w, b));
    kept.push_back((*out)[0]);
  }
  EXPECT_EQ(s->device_graph_status(), "");
  EXPECT_EQ(g_stats.captures, 1);  // the second run records; runs 3-6 replay
  EXPECT_EQ(s->device_graph_replays(), 4);
  // Outputs are the caller's: later replays did not overwrite the earlier runs' results.
  for (int run = 0; run < 6; ++run)
    ExpectValues(kept[run], Affine(Values({3, 4}, 1.f + run, -0.5f * run), w, b));
}

// An input that is also an output comes back as this run's input, not the recorded one.
TEST_F(PlanCaptureTest, InputsPassedThroughAreThisRunsInputs) {
  Graph g = AffineGraphFor(2);
  g.outputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Unknown()});
  auto s = Open(std::move(g));
  ASSERT_TRUE(s);
  for (int run = 0; run < 4; ++run) {
    Tensor x = Values({2, 4}, 1.f, 3.f * run);
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[1], std::vector<float>(x.data<float>(), x.data<float>() + x.numel()));
  }
  EXPECT_EQ(s->device_graph_replays(), 2);
}

TEST_F(PlanCaptureTest, DeviceFedInputsAreCopiedIntoTheRecordedBuffer) {
  auto s = Open(AffineGraphFor(2));
  ASSERT_TRUE(s);
  const Tensor w = Values({2, 4}, 0.5f, 0.25f), b = Values({2, 4}, -0.3f, 0.1f);
  for (int run = 0; run < 5; ++run) {
    Tensor x = Values({2, 4}, 2.f - run, 0.75f * run);
    auto on_device = s->ToDevice(x);  // a new device buffer each run, as a gathered batch
    ASSERT_TRUE(on_device.ok()) << on_device.status();
    auto out = s->Run({{"x", *on_device}});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[0], Affine(x, w, b));
  }
  EXPECT_EQ(s->device_graph_replays(), 3);
}

TEST_F(PlanCaptureTest, NewShapesLaunchThenRecordAgain) {
  Graph g = AffineGraph();  // constants sized for 2 rows; feed 2 rows, then 2 again after a failing size
  g.initializers["w4"] = Values({2, 4}, 0.5f, 0.25f);
  g.initializers["b4"] = Values({2, 4}, -0.3f, 0.1f);
  auto s = Open(std::move(g));
  ASSERT_TRUE(s);
  const Tensor w = Values({2, 4}, 0.5f, 0.25f), b = Values({2, 4}, -0.3f, 0.1f);
  for (int run = 0; run < 3; ++run) ASSERT_TRUE(s->Run({{"x", Values({2, 4}, 1.f, run)}}).ok());
  EXPECT_EQ(s->device_graph_replays(), 1);
  // Another batch size: the kernels refuse it (not x-sized constants), launched, no replay.
  auto bad = s->Run({{"x", Values({3, 4}, 1.f, 0.f)}});
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(s->device_graph_replays(), 1);
  // Back to 2 rows: a launched warm-up run, a new recording, then replays again.
  for (int run = 0; run < 4; ++run) {
    Tensor x = Values({2, 4}, -1.f, 0.5f * run);
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[0], Affine(x, w, b));
  }
  EXPECT_EQ(g_stats.captures, 2);
  EXPECT_EQ(s->device_graph_replays(), 3);
}

// p (fed on the device, updated in place) += x: replays update the caller's buffer; a new
// buffer is recorded again and updated, the old one left alone.
TEST_F(PlanCaptureTest, InputsUpdatedInPlaceAreTheCallersBuffers) {
  Graph g;
  g.opsets[""] = 17;
  g.opsets["test"] = 1;
  g.inputs = {FloatInput("p", 3), FloatInput("x", 3)};
  g.outputs = {ValueInfo{"p_out", DataType::kFloat, Shape::Unknown()}};
  g.nodes.push_back(MakeNode("Accumulate", {"p", "x"}, {"p_out"}, "test"));
  auto s = Open(std::move(g));
  ASSERT_TRUE(s);
  auto p = s->ToDevice(Values({1, 3}, 0.f, 1.f));  // all ones
  ASSERT_TRUE(p.ok());
  float expected = 1.f;
  for (int run = 0; run < 5; ++run) {
    Tensor x = Values({1, 3}, 0.f, 0.5f + run);
    expected += 0.5f + run;
    auto out = s->Run({{"p", *p}, {"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  EXPECT_EQ(s->device_graph_replays(), 3);
  auto host = s->ToHost(*p);
  ASSERT_TRUE(host.ok());
  ExpectValues(*host, {expected, expected, expected});

  auto q = s->ToDevice(Values({1, 3}, 0.f, 10.f));  // a new parameter buffer
  ASSERT_TRUE(q.ok());
  for (int run = 0; run < 2; ++run) ASSERT_TRUE(s->Run({{"p", *q}, {"x", Values({1, 3}, 0.f, 1.f)}}).ok());
  EXPECT_EQ(g_stats.captures, 2);  // recorded again for q, then replayed
  EXPECT_EQ(s->device_graph_replays(), 4);
  auto q_host = s->ToHost(*q);
  auto p_host = s->ToHost(*p);
  ASSERT_TRUE(q_host.ok() && p_host.ok());
  ExpectValues(*q_host, {12.f, 12.f, 12.f});
  ExpectValues(*p_host, {expected, expected, expected});
}

TEST_F(PlanCaptureTest, AFailedRecordingLaunchesAndSaysWhy) {
  Graph g = AffineGraphFor(2);
  g.opsets["test"] = 1;
  g.nodes.push_back(MakeNode("Fragile", {"y"}, {"y2"}, "test"));
  g.outputs = {ValueInfo{"y2", DataType::kFloat, Shape::Unknown()}};
  auto s = Open(std::move(g));
  ASSERT_TRUE(s);
  const Tensor w = Values({2, 4}, 0.5f, 0.25f), b = Values({2, 4}, -0.3f, 0.1f);
  for (int run = 0; run < 4; ++run) {
    Tensor x = Values({2, 4}, 1.5f, -0.2f * run);
    auto out = s->Run({{"x", x}});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectValues((*out)[0], Affine(x, w, b));
  }
  EXPECT_EQ(g_stats.captures, 1);
  EXPECT_EQ(s->device_graph_replays(), 0);
  EXPECT_NE(s->device_graph_status().find("Fragile cannot be recorded"), std::string::npos)
      << s->device_graph_status();
}

TEST_F(PlanCaptureTest, HostComputationOnDataIsNotRecorded) {
  Graph g = AffineGraphFor(2);
  g.nodes.push_back(MakeNode("Neg", {"y"}, {"y2"}));  // no device kernel: the host computes on data
  g.nodes.push_back(MakeNode("Mul", {"y2", "w4"}, {"y3"}));
  g.outputs = {ValueInfo{"y3", DataType::kFloat, Shape::Unknown()}};
  auto s = Open(std::move(g));
  ASSERT_TRUE(s);
  for (int run = 0; run < 3; ++run) ASSERT_TRUE(s->Run({{"x", Values({2, 4}, 1.f, run)}}).ok());
  EXPECT_EQ(g_stats.captures, 0);
  EXPECT_NE(s->device_graph_status().find("moves a value between devices"), std::string::npos)
      << s->device_graph_status();
}

TEST_F(PlanCaptureTest, OffWhenProfilingOrNotAsked) {
  for (bool profiling : {false, true}) {
    auto s = Open(AffineGraphFor(2), /*device_graphs=*/profiling, profiling);
    ASSERT_TRUE(s);
    for (int run = 0; run < 3; ++run) ASSERT_TRUE(s->Run({{"x", Values({2, 4}, 1.f, run)}}).ok());
    EXPECT_EQ(s->device_graph_replays(), 0);
  }
  EXPECT_EQ(g_stats.captures, 0);
}

}  // namespace
}  // namespace tandem
