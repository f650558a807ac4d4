// The cross-device machinery (partitioner Copy nodes, host inputs, output copies, device
// residency of feeds and trainer state, CPU fallback) checked without a GPU: a stand-in
// "device" provider whose memory is ordinary host memory tagged as another device and
// whose kernels are a subset of the CPU's. Results must equal the CPU-only run bit for
// bit (same kernels), and the bytes it copies show what crosses the device edge.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "framework/copy_kernel.h"
#include "onnx_import/import.h"
#include "placement/partitioner.h"
#include "providers/cpu/cpu_provider.h"
#include "runtime/session.h"
#include "tests/tagged_host_allocator.h"
#include "tests/test_models.h"
#include "training/trainer.h"

namespace tandem {
namespace {

constexpr Device kFakeDevice{DeviceType::kCuda, 5};

// Kernels the stand-in device has; everything else falls back to the CPU.
const char* const kDeviceOps[] = {"Gemm", "MatMul", "Relu", "Add", "Sub", "Mul", "Div", "Neg", "Expand", "Sum",
                                  "ReduceMean", "ReduceSum", "Reshape", "Transpose", "Identity"};
const char* const kDeviceTandemOps[] = {"ReluGrad", "MeanScale", "AdamUpdate", "SGDUpdate",
                                        "FusedGemm", "FusedMatMul", "SumToShape", "ScalarLike",
                                        "MSELoss", "MSELossGrad"};

const KernelRegistry& FakeRegistry() {
  static const KernelRegistry* r = [] {
    auto* reg = new KernelRegistry;
    RegisterCopyKernel(*reg);
    const KernelRegistry& cpu = CpuKernelRegistry();
    auto copy_defs = [&](const std::string& domain, const std::string& op) {
      for (int opset : {1, 6, 7, 9, 11, 13, 14, 18}) {
        const KernelDef* d = cpu.Find(domain, op, opset, DataType::kUndefined);
        if (!d) continue;
        KernelDef def = *d;
        if (domain.empty() && op == "Reshape") def.host_inputs = {1};  // the shape vector
        if (op == "AdamUpdate") def.host_inputs = {4, 5};               // step, lr
        if (op == "SGDUpdate") def.host_inputs = {2, 3};
        if (op == "Expand") def.host_inputs = {1};
        if (op == "SumToShape") def.metadata_inputs = {1};
        if (op == "ScalarLike") def.metadata_inputs = {0};
        reg->Add(std::move(def));
      }
    };
    for (const char* op : kDeviceOps) copy_defs("", op);
    for (const char* op : kDeviceTandemOps) copy_defs("ai.tandem", op);
    return reg;
  }();
  return *r;
}

// Copies are plain memcpy; every byte that crosses the edge is counted.
size_t g_bytes_copied = 0;
// What each fake provider instance did, in order: 'c' a copy, 's' a Synchronize.
struct ProviderEvent {
  const void* provider;
  char kind;
};
std::vector<ProviderEvent> g_events;

class FakeDeviceProvider : public ExecutionProvider {
 public:
  std::string name() const override { return "fake"; }
  Device device() const override { return kFakeDevice; }
  Allocator& allocator() override { return allocator_; }
  const KernelRegistry& registry() const override { return FakeRegistry(); }
  absl::Status Copy(const Tensor& src, Tensor& dst) override {
    if (src.bytes() != dst.bytes()) return absl::InvalidArgumentError("size mismatch");
    if (src.bytes()) std::memcpy(dst.raw(), src.raw(), src.bytes());
    g_bytes_copied += src.bytes();
    g_events.push_back({this, 'c'});
    return absl::OkStatus();
  }
  absl::Status Synchronize() override {
    g_events.push_back({this, 's'});
    return absl::OkStatus();
  }

 private:
  testing::TaggedHostAllocator allocator_{kFakeDevice};
};

// A session on [fake, cpu] built by hand (CreateProvider knows only real providers).
absl::StatusOr<std::unique_ptr<Plan>> FakePlan(Graph& g, FakeDeviceProvider& fake, CpuProvider& cpu,
                                               PartitionResult* result = nullptr) {
  auto part = Partition(g, {&fake, &cpu});
  if (!part.ok()) return part.status();
  if (result) *result = *part;
  return Plan::Build(g, {{"fake", &fake}, {"cpu", &cpu}}, 1);
}

Graph Load(const std::string& model) {
  auto g = ImportModelFile(std::string(TANDEM_SOURCE_DIR) + "/models/" + model);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : Graph();
}

Tensor Ramp(Dims dims, float scale) {
  Tensor t = Tensor::Host(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * static_cast<float>((i * 37) % 101 - 50);
  return t;
}

std::vector<Tensor> RunCpuOnly(const std::string& model, const std::map<std::string, Tensor>& feeds) {
  SessionOptions o;
  o.num_threads = 1;
  o.fusion = false;
  auto s = Session::Load(std::string(TANDEM_SOURCE_DIR) + "/models/" + model, o);
  EXPECT_TRUE(s.ok()) << s.status();
  auto out = (*s)->Run(feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>{};
}

void ExpectSameFloats(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.device().type, DeviceType::kCpu);
  ASSERT_EQ(a.dims(), b.dims());
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
}

TEST(CrossDevice, MlpRunsOnDeviceWithWeightsCopiedOnceAndOutputBackOnHost) {
  Graph g = Load("peaks_mlp.onnx");
  FakeDeviceProvider fake;
  CpuProvider cpu;
  PartitionResult part;
  auto plan = FakePlan(g, fake, cpu, &part);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(part.nodes_per_provider.count("cpu"), 0u) << "every MLP op exists on the device";
  Tensor x = Ramp({64, 2}, 0.02f);
  const std::vector<Tensor> want = RunCpuOnly("peaks_mlp.onnx", {{"x", x}});

  g_bytes_copied = 0;
  auto first = (*plan)->Run({x});
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectSameFloats((*first)[0], want[0]);
  size_t weight_bytes = 0;
  for (const auto& [name, t] : g.initializers) weight_bytes += t.bytes();
  const size_t io_bytes = x.bytes() + want[0].bytes();
  EXPECT_EQ(g_bytes_copied, weight_bytes + io_bytes);

  g_bytes_copied = 0;
  auto second = (*plan)->Run({x});
  ASSERT_TRUE(second.ok()) << second.status();
  ExpectSameFloats((*second)[0], want[0]);
  EXPECT_EQ(g_bytes_copied, io_bytes) << "constants must stay on the device after the first run";

  // An input already on the device is used in place: only the output comes back.
  Tensor xd = AllocateTensor(fake.allocator(), DataType::kFloat, x.dims());
  std::memcpy(xd.raw(), x.raw(), x.bytes());
  g_bytes_copied = 0;
  auto resident = (*plan)->Run({xd});
  ASSERT_TRUE(resident.ok()) << resident.status();
  ExpectSameFloats((*resident)[0], want[0]);
  EXPECT_EQ(g_bytes_copied, want[0].bytes());
}

TEST(CrossDevice, MissingOpsFallBackToTheCpuThroughCopies) {
  // ode_mlp is Gemm -> Tanh -> Gemm; the stand-in device has no Tanh.
  Graph g = Load("ode_mlp.onnx");
  FakeDeviceProvider fake;
  CpuProvider cpu;
  PartitionResult part;
  auto plan = FakePlan(g, fake, cpu, &part);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(part.nodes_per_provider["cpu"], 1);
  EXPECT_GE(part.nodes_per_provider["fake"], 2);
  int copies_to_cpu = 0;
  for (const Node& n : g.nodes)
    if (n.op_type == "Copy" && n.attr_string("to", "") == "cpu") {
      ++copies_to_cpu;
      EXPECT_EQ(n.provider, "fake") << "a copy runs on the device side of its edge";
    }
  EXPECT_EQ(copies_to_cpu, 2) << "Gemm->Tanh edge and the graph output";
  Tensor x = Ramp({8, 3}, 0.05f);
  auto out = (*plan)->Run({x});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameFloats((*out)[0], RunCpuOnly("ode_mlp.onnx", {{"x", x}})[0]);
}

TEST(CrossDevice, HostInputsAreNeverCopiedToTheDevice) {
  // Reshape's shape input is read on the host: no Copy may feed it.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* gp = m.mutable_graph();
  gp->set_name("reshape");
  auto add_vi = [](onnx::ValueInfoProto* vi, const char* name, std::vector<int64_t> dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_vi(gp->add_input(), "x", {2, 6});
  add_vi(gp->add_output(), "y", {3, 4});
  onnx::TensorProto* shape = gp->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(3);
  shape->add_int64_data(4);
  onnx::NodeProto* relu = gp->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("r");
  onnx::NodeProto* reshape = gp->add_node();
  reshape->set_op_type("Reshape");
  reshape->add_input("r");
  reshape->add_input("shape");
  reshape->add_output("y");
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", "reshape");
  ASSERT_TRUE(g.ok()) << g.status();
  FakeDeviceProvider fake;
  CpuProvider cpu;
  auto plan = FakePlan(*g, fake, cpu);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const Node& n : g->nodes) {
    if (n.op_type == "Copy") EXPECT_NE(n.inputs[0], "shape") << "the shape vector was copied";
    if (n.op_type == "Reshape") {
      EXPECT_EQ(n.provider, "fake");
      EXPECT_EQ(n.inputs[1], "shape");
    }
  }
  Tensor x = Ramp({2, 6}, 1.f);
  auto out = (*plan)->Run({x});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dims(), (Dims{3, 4}));
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ((*out)[0].data<float>()[i], std::max(0.f, x.data<float>()[i]));
}

TEST(CrossDevice, DeviceFeedReadByAHostKernelIsCopiedToTheHostFirst) {
  // ode_mlp's first Gemm is forced onto the CPU here by giving the device nothing but
  // Copy: the device-resident feed must be brought to the host, not handed over as is.
  Graph g = Load("ode_mlp.onnx");
  FakeDeviceProvider fake;
  CpuProvider cpu;
  auto part = Partition(g, {&cpu});
  ASSERT_TRUE(part.ok()) << part.status();
  auto plan = Plan::Build(g, {{"fake", &fake}, {"cpu", &cpu}}, 1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  Tensor x = Ramp({4, 3}, 0.05f);
  Tensor xd = AllocateTensor(fake.allocator(), DataType::kFloat, x.dims());
  std::memcpy(xd.raw(), x.raw(), x.bytes());
  auto out = (*plan)->Run({xd});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectSameFloats((*out)[0], RunCpuOnly("ode_mlp.onnx", {{"x", x}})[0]);
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

std::vector<double> TrainPeaks(const std::vector<std::string>& providers, int steps,
                               std::unique_ptr<training::Trainer>* keep) {
  Graph g = Load("peaks_mlp.onnx");
  training::TrainerOptions o;
  o.num_threads = 1;
  o.providers = providers;
  o.spec.optimizer.lr = 0.01f;
  // Unfused on both sides, for bit-identical losses: a CPU-only trainer would otherwise
  // fuse the MLP into a DenseChain, which the stand-in device does not have.
  o.fusion = false;
  auto t = training::Trainer::Create(g, o);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return {};
  std::vector<double> losses = testing::StepLosses(**t, "x", Ramp({32, 2}, 0.03f), Ramp({32, 1}, 0.01f), steps);
  *keep = std::move(*t);
  return losses;
}

TEST(CrossDevice, TrainerKeepsParametersAndStateOnTheDevice) {
  RegisterProviderFactory("fake", [] { return std::make_unique<FakeDeviceProvider>(); });
  std::unique_ptr<training::Trainer> cpu_trainer, dev_trainer;
  const std::vector<double> want = TrainPeaks({"cpu"}, 5, &cpu_trainer);
  g_bytes_copied = 0;
  const std::vector<double> got = TrainPeaks({"fake", "cpu"}, 5, &dev_trainer);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "step " << i + 1;
  size_t param_bytes = 0;
  for (const auto& [name, t] : dev_trainer->parameters()) {
    EXPECT_EQ(t.device(), kFakeDevice) << name;
    param_bytes += t.bytes();
  }
  for (const auto& [name, t] : dev_trainer->optimizer_state()) EXPECT_EQ(t.device(), kFakeDevice) << name;
  // Uploads: parameters + Adam's two moments once. Per step: the batch and a handful of
  // scalars (the loss back) — never the parameters again.
  const size_t batch_bytes = (32 * 2 + 32 * 1) * sizeof(float);
  EXPECT_LE(g_bytes_copied, 3 * param_bytes + 5 * (batch_bytes + 64));
  // Checkpoints and export come back to the host with the trained values.
  auto host = dev_trainer->ToHostCopies(dev_trainer->parameters());
  ASSERT_TRUE(host.ok()) << host.status();
  for (const auto& [name, t] : cpu_trainer->parameters()) ExpectSameFloats(host->at(name), t);
  auto exported = dev_trainer->ExportInference();
  ASSERT_TRUE(exported.ok()) << exported.status();
  for (const auto& [name, t] : cpu_trainer->parameters())
    ExpectSameFloats(exported->initializers.at(name), t);
  auto ckpt = dev_trainer->MakeCheckpoint(1, "");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  ASSERT_TRUE(dev_trainer->RestoreCheckpoint(*ckpt).ok());
  for (const auto& [name, t] : dev_trainer->parameters()) EXPECT_EQ(t.device(), kFakeDevice) << name;
}

// A trainer's eval session (Predict) has providers, and on a GPU a stream, of its own and
// reads the parameters the training step updates in place: the training session's device
// work is drained before the eval session touches anything, and the eval's own after it.
TEST(CrossDevice, PredictWaitsForTheTrainingStepAndDrainsItsOwnWork) {
  RegisterProviderFactory("fake", [] { return std::make_unique<FakeDeviceProvider>(); });
  std::unique_ptr<training::Trainer> t;
  TrainPeaks({"fake", "cpu"}, 2, &t);
  ASSERT_TRUE(t);
  g_events.clear();
  auto out = t->Predict({{"x", Ramp({8, 2}, 0.02f)}});
  ASSERT_TRUE(out.ok()) << out.status();
  auto first_copy = std::find_if(g_events.begin(), g_events.end(), [](const ProviderEvent& e) { return e.kind == 'c'; });
  ASSERT_NE(first_copy, g_events.end()) << "the batch was not copied to the device";
  const void* eval = first_copy->provider;  // the eval session's provider uploads the batch
  EXPECT_TRUE(std::any_of(g_events.begin(), first_copy,
                          [&](const ProviderEvent& e) { return e.kind == 's' && e.provider != eval; }))
      << "the eval session ran before the training session's device work was drained";
  ASSERT_FALSE(g_events.empty());
  EXPECT_EQ(g_events.back().kind, 's');
  EXPECT_EQ(g_events.back().provider, eval) << "Predict returned with the eval session's work queued";
}

}  // namespace
}  // namespace tandem
