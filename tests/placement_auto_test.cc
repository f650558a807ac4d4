// --device auto's decisions (PartitionOptions::Policy::kLowestCost through Session and
// Trainer) on the reference models, with a stand-in GPU: the CPU's kernels on host memory
// tagged cuda:7, estimated with the CUDA provider's own cost functions (DefaultGpuSpeed,
// GpuCopyCostUs) against this machine's measured CPU speed. What a real GPU then runs
// is checked on one (bench/gpu_bench.py); here, that the choices follow the costs.
#include <gtest/gtest.h>

#include <cstring>

#include "framework/copy_kernel.h"
#include "onnx_import/import.h"
#include "placement/cost_model.h"
#include "providers/cpu/cpu_provider.h"
#include "runtime/session.h"
#include "tests/tagged_host_allocator.h"
#include "training/trainer.h"

namespace tandem {
namespace {

constexpr Device kGpuLike{DeviceType::kCuda, 7};

class GpuLikeProvider : public ExecutionProvider {
 public:
  std::string name() const override { return "gpu-like"; }
  Device device() const override { return kGpuLike; }
  Allocator& allocator() override { return allocator_; }
  const KernelRegistry& registry() const override {
    static const KernelRegistry* r = [] {
      auto* reg = new KernelRegistry(CpuKernelRegistry());
      RegisterCopyKernel(*reg);
      return reg;
    }();
    return *r;
  }
  std::optional<double> Capability(const KernelInfo& info) const override {
    if (!FindKernel(info)) return std::nullopt;
    return EstimateUs(EstimateWork(info), DefaultGpuSpeed());
  }
  double launch_overhead_us() const override { return DefaultGpuSpeed().launch_us; }
  double CopyCostUs(int64_t bytes) const override { return GpuCopyCostUs(bytes); }
  absl::Status Copy(const Tensor& src, Tensor& dst) override {
    if (src.bytes() != dst.bytes()) return absl::InvalidArgumentError("size mismatch");
    if (src.bytes()) std::memcpy(dst.raw(), src.raw(), src.bytes());
    return absl::OkStatus();
  }

 private:
  testing::TaggedHostAllocator allocator_{kGpuLike};
};

class AutoPlacement : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    RegisterProviderFactory("gpu-like", [] { return std::make_unique<GpuLikeProvider>(); });
  }
  static Graph Load(const std::string& model) {
    auto g = ImportModelFile(std::string(TANDEM_SOURCE_DIR) + "/models/" + model);
    EXPECT_TRUE(g.ok()) << g.status();
    return g.ok() ? std::move(*g) : Graph();
  }
  static training::TrainerOptions Auto(int64_t batch) {
    training::TrainerOptions o;
    o.num_threads = 1;
    o.providers = {"gpu-like", "cpu"};
    o.placement = PartitionOptions::Policy::kLowestCost;
    o.dim_values = {{"batch", batch}};
    o.spec.optimizer.lr = 0.01f;
    return o;
  }
  static SessionOptions AutoSession(int64_t batch) {
    SessionOptions o;
    o.num_threads = 1;
    o.providers = {"gpu-like", "cpu"};
    o.placement = PartitionOptions::Policy::kLowestCost;
    o.dim_values = {{"batch", batch}};
    return o;
  }
};

double Estimate(const PartitionResult& r, const std::string& candidate) {
  for (const auto& [name, us] : r.candidates)
    if (name == candidate) return us;
  ADD_FAILURE() << "no candidate '" << candidate << "'";
  return 0;
}

// The neural-ODE step (3 -> 100 tanh -> 3) at batch 1: a GPU launch costs more than the
// math, so the whole step trains on the CPU, with the CPU-only fusions.
TEST_F(AutoPlacement, TinyTrainStepStaysOnTheCpu) {
  auto t = training::Trainer::Create(Load("ode_mlp.onnx"), Auto(1));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->providers(), std::vector<std::string>{"cpu"});
  const PartitionResult& e = (*t)->placement_estimates();
  EXPECT_LT(Estimate(e, "all on cpu"), Estimate(e, "all on gpu-like"));
  for (const auto& [name, tensor] : (*t)->parameters()) EXPECT_EQ(tensor.device().type, DeviceType::kCpu) << name;
  bool chain = false;  // a CPU trainer: the MLP and its gradient fused as on --device cpu
  for (const Node& n : (*t)->training_graph().graph.nodes) chain |= n.op_type.rfind("DenseChain", 0) == 0;
  EXPECT_TRUE(chain);
}

// A CNN at batch 128 (fashion_cnn.onnx: the CIFAR CNN's layers at 28x28x1; cifar_cnn.onnx
// is generated, not committed): convolutions dominate and the GPU's throughput wins.
TEST_F(AutoPlacement, CnnTrainStepAtBatch128GoesToTheGpu) {
  auto t = training::Trainer::Create(Load("fashion_cnn.onnx"), Auto(128));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_FALSE((*t)->providers().empty());
  EXPECT_EQ((*t)->providers().front(), "gpu-like");
  const PartitionResult& e = (*t)->placement_estimates();
  EXPECT_NE(e.plan, "all on cpu");
  EXPECT_GT(Estimate(e, "all on cpu"), 2 * Estimate(e, "all on gpu-like"));
  for (const auto& [name, tensor] : (*t)->parameters()) EXPECT_EQ(tensor.device(), kGpuLike) << name;
  // It still trains there (a step at a small batch, the same kernels as the CPU's).
  Tensor x = Tensor::Host(DataType::kFloat, {2, 1, 28, 28});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 13) % 17) / 17.f - 0.5f;
  Tensor y = Tensor::Host(DataType::kFloat, {2, 10});
  auto loss = (*t)->Step({{"x", x}}, y);
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_TRUE(std::isfinite(*loss));
}

// Inference: the estimates grow with the batch, and at batch 128 the GPU wins.
TEST_F(AutoPlacement, CnnInferenceAtBatch128GoesToTheGpu) {
  auto small = Session::FromGraph(Load("fashion_cnn.onnx"), AutoSession(1));
  auto large = Session::FromGraph(Load("fashion_cnn.onnx"), AutoSession(128));
  ASSERT_TRUE(small.ok()) << small.status();
  ASSERT_TRUE(large.ok()) << large.status();
  const PartitionResult& s = (*small)->stats().placement;
  const PartitionResult& l = (*large)->stats().placement;
  EXPECT_GT(Estimate(l, "all on cpu"), 10 * Estimate(s, "all on cpu"));
  EXPECT_NE(l.plan, "all on cpu");
  EXPECT_EQ((*large)->providers().front()->name(), "gpu-like");
  // Node estimates are reported for every placed node, each with both providers.
  ASSERT_FALSE(l.node_estimates.empty());
  for (const NodeEstimate& n : l.node_estimates)
    if (n.op == "Conv" || n.op == "FusedConv") EXPECT_EQ(n.us.size(), 2u) << n.node;
}

// A session whose cheapest placement is all on the CPU drops the device and gets the
// CPU-only fusions (the MLP becomes one DenseChain node), as --device cpu would.
TEST_F(AutoPlacement, AllOnCpuSessionIsACpuSession) {
  auto s = Session::FromGraph(Load("ode_mlp.onnx"), AutoSession(1));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ((*s)->providers().size(), 1u);
  EXPECT_EQ((*s)->providers().front()->name(), "cpu");
  bool chain = false;
  for (const Node& n : (*s)->graph().nodes) chain |= n.op_type == "DenseChain";
  EXPECT_TRUE(chain);
  EXPECT_EQ((*s)->stats().placement.plan, "all on cpu");
  EXPECT_EQ((*s)->stats().placement.candidates.size(), 3u);  // cpu, gpu-like, node by node
  Tensor x = Tensor::Host(DataType::kFloat, {1, 3});
  auto out = (*s)->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status();
}

TEST(DimValuesOf, TakesSymbolicDimsFromFeedShapes) {
  std::vector<ValueInfo> inputs = {
      ValueInfo{"x", DataType::kFloat, Shape::Of({-1, 3})},
      ValueInfo{"m", DataType::kFloat, Shape::Unknown()},
  };
  inputs[0].shape.dims[0] = Dim{-1, "batch"};
  ValueInfo seq{"s", DataType::kFloat, Shape::Of({-1, -1})};
  seq.shape.dims[0] = Dim{-1, "batch"};
  seq.shape.dims[1] = Dim{-1, "time"};
  inputs.push_back(seq);
  auto v = DimValuesOf(inputs, {{"x", {64, 3}}, {"m", {5}}, {"s", {99, 7}}});
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v["batch"], 64);  // the first input to name it
  EXPECT_EQ(v["time"], 7);
  EXPECT_TRUE(DimValuesOf(inputs, {{"x", {64, 3, 1}}}).empty());  // rank differs
}

}  // namespace
}  // namespace tandem
