// Cost-based placement (PartitionOptions::Policy::kLowestCost) with synthetic providers
// whose cost tables the tests set: each node goes where it is cheaper, copies count, and a
// small graph whose copies would cost more than the device saves stays in one piece.
#include <gtest/gtest.h>

#include <map>

#include "placement/cost_model.h"
#include "placement/partitioner.h"
#include "providers/cpu/cpu_provider.h"

namespace tandem {
namespace {

// A provider whose estimates come from a table: op type -> microseconds.
class TableProvider : public ExecutionProvider {
 public:
  TableProvider(std::string name, Device device, std::map<std::string, double> costs, double copy_fixed_us,
                double copy_us_per_byte)
      : name_(std::move(name)), device_(device), costs_(std::move(costs)), copy_fixed_(copy_fixed_us),
        copy_per_byte_(copy_us_per_byte) {}
  std::string name() const override { return name_; }
  Device device() const override { return device_; }
  Allocator& allocator() override { return cpu_.allocator(); }
  const KernelRegistry& registry() const override { return CpuKernelRegistry(); }
  absl::Status Copy(const Tensor&, Tensor&) override { return absl::OkStatus(); }
  std::optional<double> Capability(const KernelInfo& info) const override {
    auto it = costs_.find(info.node.op_type);
    if (it == costs_.end()) return std::nullopt;
    return it->second;
  }
  double CopyCostUs(int64_t bytes) const override {
    return device_.type == DeviceType::kCpu ? 0 : copy_fixed_ + copy_per_byte_ * static_cast<double>(bytes);
  }

 private:
  std::string name_;
  Device device_;
  std::map<std::string, double> costs_;
  double copy_fixed_, copy_per_byte_;
  CpuProvider cpu_;
};

// x [n, n] -> MatMul(w) -> Relu -> MatMul(w) -> y, float32, shapes known.
Graph Chain(int64_t n) {
  Graph g;
  g.opsets[""] = 13;
  g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of({n, n})});
  g.initializers["w"] = Tensor::Host(DataType::kFloat, {n, n});
  auto add = [&g, n](const std::string& op, std::vector<std::string> in, const std::string& out) {
    Node node;
    node.name = out;
    node.op_type = op;
    node.inputs = std::move(in);
    node.outputs = {out};
    g.nodes.push_back(node);
    g.value_info[out] = ValueInfo{out, DataType::kFloat, Shape::Of({n, n})};
  };
  add("MatMul", {"x", "w"}, "a");
  add("Relu", {"a"}, "r");
  add("MatMul", {"r", "w"}, "y");
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Of({n, n})});
  return g;
}

std::map<std::string, std::string> ProviderOf(const Graph& g) {
  std::map<std::string, std::string> where;
  for (const Node& n : g.nodes)
    if (n.op_type != "Copy") where[n.name] = n.provider;
  return where;
}

PartitionOptions LowestCost() {
  PartitionOptions o;
  o.policy = PartitionOptions::Policy::kLowestCost;
  return o;
}

const Device kGpu{DeviceType::kCuda, 0};

TEST(PlacementCost, EachNodeGoesWhereItIsCheaperWhenCopiesAreFree) {
  TableProvider cpu("cpu", Device{}, {{"MatMul", 100}, {"Relu", 1}}, 0, 0);
  TableProvider gpu("gpu", kGpu, {{"MatMul", 10}, {"Relu", 5}}, 0, 0);
  Graph g = Chain(64);
  auto r = Partition(g, {&gpu, &cpu}, LowestCost());
  ASSERT_TRUE(r.ok()) << r.status();
  const auto where = ProviderOf(g);
  EXPECT_EQ(where.at("a"), "gpu");
  EXPECT_EQ(where.at("r"), "cpu");
  EXPECT_EQ(where.at("y"), "gpu");
  EXPECT_EQ(r->plan, "node by node");
  EXPECT_DOUBLE_EQ(r->estimated_us, 10 + 1 + 10);
}

TEST(PlacementCost, CopyCostKeepsASmallGraphInOnePiece) {
  // The GPU computes each node faster, but every copy costs a 10 us launch: moving x, w and
  // y would cost more than the 3 nodes save, so everything stays on the CPU.
  TableProvider cpu("cpu", Device{}, {{"MatMul", 4}, {"Relu", 1}}, 0, 0);
  TableProvider gpu("gpu", kGpu, {{"MatMul", 2}, {"Relu", 0.5}}, 10, 0);
  Graph g = Chain(3);
  auto r = Partition(g, {&gpu, &cpu}, LowestCost());
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& [node, provider] : ProviderOf(g)) EXPECT_EQ(provider, "cpu") << node;
  EXPECT_EQ(r->copies_inserted, 0);
  EXPECT_EQ(r->plan, "all on cpu");
  EXPECT_DOUBLE_EQ(r->estimated_us, 4 + 1 + 4);
}

TEST(PlacementCost, BigWorkGoesToTheDeviceInOnePieceDespiteCopies) {
  // Same costs per byte, but the matmuls dominate: one trip there and back is worth it,
  // and the cheap Relu stays beside its neighbours instead of making two more copies.
  TableProvider cpu("cpu", Device{}, {{"MatMul", 5000}, {"Relu", 2}}, 0, 0);
  TableProvider gpu("gpu", kGpu, {{"MatMul", 50}, {"Relu", 3}}, 10, 0.001);
  Graph g = Chain(512);
  auto r = Partition(g, {&cpu, &gpu}, LowestCost());  // the user prefers the CPU
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& [node, provider] : ProviderOf(g)) EXPECT_EQ(provider, "gpu") << node;
  EXPECT_EQ(r->copies_inserted, 3);  // x and w there, y back
}

TEST(PlacementCost, TiesGoToTheUsersFirstProvider) {
  TableProvider cpu("cpu", Device{}, {{"MatMul", 5}, {"Relu", 1}}, 0, 0);
  TableProvider gpu("gpu", kGpu, {{"MatMul", 5}, {"Relu", 1}}, 0, 0);
  for (bool gpu_first : {true, false}) {
    Graph g = Chain(8);
    auto r = gpu_first ? Partition(g, {&gpu, &cpu}, LowestCost()) : Partition(g, {&cpu, &gpu}, LowestCost());
    ASSERT_TRUE(r.ok()) << r.status();
    for (const auto& [node, provider] : ProviderOf(g)) EXPECT_EQ(provider, gpu_first ? "gpu" : "cpu") << node;
  }
}

// x [batch, 4] -> Shape -> Gather(0) -> Concat([-1 ... ]) -> Reshape(x) -> y: the GPU
// claims every node at no cost, yet the integer shape arithmetic stays on the host.
TEST(PlacementCost, ShapeArithmeticStaysOnTheHost) {
  TableProvider cpu("cpu", Device{}, {{"Shape", 9}, {"Gather", 9}, {"Concat", 9}, {"Reshape", 9}}, 0, 0);
  TableProvider gpu("gpu", kGpu, {{"Shape", 0}, {"Gather", 0}, {"Concat", 0}, {"Reshape", 0}}, 0, 0);
  Graph g;
  g.opsets[""] = 13;
  ValueInfo x{"x", DataType::kFloat, Shape::Of({-1, 4})};
  x.shape.dims[0] = Dim{-1, "batch"};
  g.inputs.push_back(x);
  g.initializers["zero"] = Tensor::Scalar<int64_t>(0);
  Tensor tail = Tensor::Host(DataType::kInt64, {1});
  tail.data<int64_t>()[0] = 4;
  g.initializers["tail"] = tail;
  auto add = [&g](const std::string& op, std::vector<std::string> in, const std::string& out, DataType t) {
    Node node;
    node.name = out;
    node.op_type = op;
    node.inputs = std::move(in);
    node.outputs = {out};
    if (op == "Concat") node.attributes["axis"] = IntAttribute(0);
    g.nodes.push_back(node);
    g.value_info[out] = ValueInfo{out, t, Shape::Unknown()};
  };
  add("Shape", {"x"}, "s", DataType::kInt64);
  add("Gather", {"s", "zero"}, "n", DataType::kInt64);
  add("Concat", {"n", "tail"}, "target", DataType::kInt64);
  add("Reshape", {"x", "target"}, "y", DataType::kFloat);
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Unknown()});
  for (auto policy : {PartitionOptions::Policy::kLowestCost, PartitionOptions::Policy::kPreferenceOrder}) {
    Graph h = g;
    PartitionOptions o;
    o.policy = policy;
    o.dim_values = {{"batch", 1 << 20}};
    auto r = Partition(h, {&gpu, &cpu}, o);
    ASSERT_TRUE(r.ok()) << r.status();
    const auto where = ProviderOf(h);
    EXPECT_EQ(where.at("s"), "cpu");
    EXPECT_EQ(where.at("n"), "cpu");
    EXPECT_EQ(where.at("target"), "cpu");
    EXPECT_EQ(where.at("y"), "gpu");
  }
}

// Symbolic dims take PartitionOptions::dim_values in the estimates: copying a [batch, n]
// input costs per byte, so a large batch tips the same graph to the side without copies.
TEST(PlacementCost, DimValuesSizeTheCopies) {
  TableProvider cpu("cpu", Device{}, {{"MatMul", 30}, {"Relu", 1}}, 0, 0);
  TableProvider gpu("gpu", kGpu, {{"MatMul", 10}, {"Relu", 1}}, 0, 0.001);
  for (int64_t batch : {16, 1 << 16}) {
    Graph g = Chain(16);
    g.inputs[0].shape.dims[0] = Dim{-1, "batch"};
    PartitionOptions o = LowestCost();
    o.dim_values = {{"batch", batch}};
    auto r = Partition(g, {&gpu, &cpu}, o);
    ASSERT_TRUE(r.ok()) << r.status();
    // x: 16*16*4 = 1 KiB (1 us) vs 4 MiB (4 ms) to copy; the rest moves 16x16 values.
    // Small: all on the GPU. Large: the first MatMul where x is, the rest on the GPU.
    EXPECT_EQ(r->plan, batch == 16 ? "all on gpu" : "node by node") << "batch " << batch;
    EXPECT_EQ(ProviderOf(g).at("a"), batch == 16 ? "gpu" : "cpu") << "batch " << batch;
  }
}

TEST(CostModel, WorkFromStaticShapes) {
  Graph g = Chain(64);
  KernelInfo mm = DescribeNode(g, g.nodes[0], nullptr);
  NodeWork w = EstimateWork(mm);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 64 * 64 * 64);               // 2·M·N·K
  EXPECT_DOUBLE_EQ(w.bytes, 3.0 * 64 * 64 * 4);                // x, w read; a written
  // Conv: X [1,3,8,8], W [4,3,3,3], Y [1,4,6,6]: 2·|Y|·3·3·3.
  Graph c;
  c.opsets[""] = 13;
  c.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of({1, 3, 8, 8})});
  c.initializers["w"] = Tensor::Host(DataType::kFloat, {4, 3, 3, 3});
  Node conv;
  conv.op_type = "Conv";
  conv.inputs = {"x", "w"};
  conv.outputs = {"y"};
  c.nodes.push_back(conv);
  c.value_info["y"] = ValueInfo{"y", DataType::kFloat, Shape::Of({1, 4, 6, 6})};
  EXPECT_DOUBLE_EQ(EstimateWork(DescribeNode(c, c.nodes[0], nullptr)).flops, 2.0 * 144 * 27);
  // The roofline: the larger of compute and memory time, plus the launch.
  EXPECT_DOUBLE_EQ(EstimateUs({1000, 800}, DeviceSpeed{10, 4, 2}), 2 + 200);
  EXPECT_DOUBLE_EQ(EstimateUs({1000, 8}, DeviceSpeed{10, 4, 2}), 2 + 100);
}

}  // namespace
}  // namespace tandem
