// Placement previews (SessionOptions::placement_preview, Trainer::PreviewStep): the CUDA
// plugin's preview provider places a model by the same code as a GPU run, on a machine
// without a GPU. Needs the plugin to load (it does wherever the CUDA toolkit built it,
// CI included); without it the tests say so and skip.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "framework/copy_kernel.h"
#include "framework/plugin/provider_plugin.h"
#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/mirror_communicator.h"
#include "training/trainer.h"

namespace tandem {
namespace {

#define REQUIRE_CUDA_PLUGIN()                                                                \
  do {                                                                                       \
    const PluginProbe& probe = ProbeProviderPlugin("cuda");                                  \
    if (!probe.loaded) GTEST_SKIP() << "the CUDA plugin is not built or loadable: " << probe.why; \
  } while (0)

Graph Model(const std::string& name) {
  auto g = ImportModelFile(std::string(TANDEM_SOURCE_DIR) + "/models/" + name);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::move(*g) : Graph();
}

// Nodes other than Copy placed on the host, as "op" strings.
std::vector<std::string> HostOps(const Graph& placed) {
  std::vector<std::string> ops;
  for (const Node& n : placed.nodes)
    if (n.provider == "cpu" && !(IsDeviceCopy(n))) ops.push_back(n.op_type);
  return ops;
}

// The values copied between devices (Copy nodes' inputs).
std::set<std::string> Copied(const Graph& placed) {
  std::set<std::string> values;
  for (const Node& n : placed.nodes)
    if (IsDeviceCopy(n)) values.insert(n.inputs[0]);
  return values;
}

TEST(PlacementPreview, InferenceRunsEveryMlpNodeOnTheGpuAndCannotRun) {
  REQUIRE_CUDA_PLUGIN();
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  o.placement_preview = true;
  auto s = Session::FromGraph(Model("peaks_mlp.onnx"), o);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(HostOps((*s)->graph()).empty()) << ::testing::PrintToString(HostOps((*s)->graph()));
  EXPECT_GT((*s)->stats().placement.nodes_per_provider.at("cuda"), 0);
  const std::set<std::string> copied = Copied((*s)->graph());
  EXPECT_TRUE(copied.count("x")) << "the input goes to the device";
  for (const std::string& v : copied)  // besides the input, weights (once) and the output back
    EXPECT_TRUE(v == "x" || (*s)->graph().initializers.count(v) || v.find("/on_cuda") != std::string::npos) << v;
  auto run = (*s)->Run({{"x", Tensor::Host(DataType::kFloat, {1, 2})}});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(std::string(run.status().message()).find("placement preview"), std::string::npos) << run.status();
}

// What a training step copies to the device each step: the batch, its target, and the
// optimizer's step and learning rate.
bool PerStepInput(const std::string& v) { return v == "x" || v == "target" || v == "train/step" || v == "train/lr"; }

// The training steps of the two MLPs: every forward, loss, backward and update node on the
// GPU; copies only for the batch, the target, the step and learning rate (two scalars the
// updates read on the device) and what the trainer keeps resident.
TEST(PlacementPreview, MlpTrainingStepsRunEntirelyOnTheGpu) {
  REQUIRE_CUDA_PLUGIN();
  for (const char* model : {"peaks_mlp.onnx", "ode_mlp.onnx"}) {
    training::TrainerOptions o;
    o.providers = {"cuda", "cpu"};
    auto p = training::Trainer::PreviewStep(Model(model), o);
    ASSERT_TRUE(p.ok()) << model << ": " << p.status();
    const Graph& g = p->session->graph();
    EXPECT_TRUE(HostOps(g).empty()) << model << ": " << ::testing::PrintToString(HostOps(g));
    bool update_on_gpu = false;
    for (const Node& n : g.nodes) update_on_gpu |= n.op_type == "AdamUpdate" && n.provider == "cuda";
    EXPECT_TRUE(update_on_gpu) << model;
    for (const std::string& v : Copied(g))
      EXPECT_TRUE(PerStepInput(v) || p->resident.count(v)) << model << ": per-step copy of " << v;
  }
}

// The CNN's step: convolutions, pools, the cross-entropy loss, their gradients and the
// updates all on the GPU (cuDNN and class_loss.cu); on the host only shape arithmetic.
TEST(PlacementPreview, CnnTrainingStepRunsOnTheGpuButShapeArithmetic) {
  REQUIRE_CUDA_PLUGIN();
  training::TrainerOptions o;
  o.providers = {"cuda", "cpu"};
  o.spec.loss = training::LossKind::kCrossEntropy;
  auto p = training::Trainer::PreviewStep(Model("fashion_cnn.onnx"), o);
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->session->graph();
  for (const std::string& op : HostOps(g)) EXPECT_TRUE(op == "Shape") << op << " runs on the host";
  for (const std::string& v : Copied(g))
    EXPECT_TRUE(PerStepInput(v) || p->resident.count(v)) << "per-step copy of " << v;
}

// A data-parallel step (two ranks) of the CNN: the gradients' all-reduce runs on the GPU
// too (NCCL), so the step copies nothing more than a plain one but this rank's share.
TEST(PlacementPreview, DataParallelCnnStepSumsGradientsOnTheGpu) {
  REQUIRE_CUDA_PLUGIN();
  MirrorCommunicator two(2);
  training::TrainerOptions o;
  o.providers = {"cuda", "cpu"};
  o.spec.loss = training::LossKind::kCrossEntropy;
  o.communicator = &two;
  auto p = training::Trainer::PreviewStep(Model("fashion_cnn.onnx"), o);
  ASSERT_TRUE(p.ok()) << p.status();
  const Graph& g = p->session->graph();
  int on_gpu = 0;
  for (const Node& n : g.nodes)
    if (n.op_type == "AllReduceStart" || n.op_type == "AllReduceWait") {
      EXPECT_EQ(n.provider, "cuda") << n.name;
      ++on_gpu;
    }
  EXPECT_GE(on_gpu, 2);
  for (const std::string& op : HostOps(g)) EXPECT_TRUE(op == "Shape") << op << " runs on the host";
  for (const std::string& v : Copied(g))
    EXPECT_TRUE(PerStepInput(v) || v == "train/grad_scale" || p->resident.count(v)) << "per-step copy of " << v;
  EXPECT_EQ(two.reductions + two.broadcasts, 0) << "a preview communicates nothing";
}

// Where the preview places one node `op` of inputs with the given shapes. Its values
// (inputs, outputs y0, y1, ...) are float but those `types` names (outputs past y0: int64).
std::string PlacedOn(const std::string& op, const std::vector<std::pair<std::string, Dims>>& inputs,
                     const std::map<std::string, Attribute>& attrs = {}, int outputs = 1,
                     const std::map<std::string, DataType>& types = {}) {
  const auto type_of = [&types](const std::string& name, DataType fallback) {
    auto it = types.find(name);
    return it == types.end() ? fallback : it->second;
  };
  Graph g;
  g.name = op;
  g.opsets[""] = 13;
  Node n;
  n.name = "n";
  n.op_type = op;
  n.attributes = attrs;
  for (const auto& [name, dims] : inputs) {
    g.inputs.push_back(ValueInfo{name, type_of(name, DataType::kFloat), Shape::Of(dims)});
    n.inputs.push_back(name);
  }
  for (int i = 0; i < outputs; ++i) {
    n.outputs.push_back("y" + std::to_string(i));
    ValueInfo vi;
    vi.name = n.outputs.back();
    vi.dtype = type_of(vi.name, i == 0 ? DataType::kFloat : DataType::kInt64);
    g.outputs.push_back(vi);
  }
  g.nodes.push_back(n);
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  o.placement_preview = true;
  o.constant_folding = o.fusion = false;
  auto s = Session::FromGraph(std::move(g), o);
  if (!s.ok()) return "error: " + std::string(s.status().message());
  for (const Node& placed : (*s)->graph().nodes)
    if (placed.op_type == op) return placed.provider;
  return "missing";
}

// What the GPU's kernels cannot do is declined at placement (the CPU runs it), never
// accepted and then refused at run time; its neighbours run on the GPU.
TEST(PlacementPreview, WhatTheGpuCannotDoIsDeclinedAtPlacement) {
  REQUIRE_CUDA_PLUGIN();
  const Dims x = {1, 3, 8, 8}, w = {4, 3, 3, 3};
  EXPECT_EQ(PlacedOn("Conv", {{"x", x}, {"w", w}}, {{"pads", IntsAttribute({1, 1, 1, 1})}}), "cuda");
  EXPECT_EQ(PlacedOn("Conv", {{"x", x}, {"w", w}}, {{"pads", IntsAttribute({0, 0, 1, 1})}}), "cpu")
      << "cuDNN takes one pad per spatial dim";
  const auto two = [](std::map<std::string, Attribute> a) {
    a["kernel_shape"] = IntsAttribute({2, 2});
    a["strides"] = IntsAttribute({2, 2});
    return a;
  };
  EXPECT_EQ(PlacedOn("MaxPool", {{"x", x}}, two({})), "cuda");
  EXPECT_EQ(PlacedOn("MaxPool", {{"x", x}}, two({{"dilations", IntsAttribute({2, 2})}})), "cpu") << "no dilation";
  EXPECT_EQ(PlacedOn("MaxPool", {{"x", x}}, two({}), 2), "cpu") << "the Indices output";
  EXPECT_EQ(PlacedOn("MaxPool", {{"x", {1, 3, 5, 5}}}, two({{"ceil_mode", IntAttribute(1)}})), "cpu")
      << "a ceil-mode window past cuDNN's floor";
  EXPECT_EQ(PlacedOn("MaxPool", {{"x", {1, 3, 6, 6}}}, two({{"ceil_mode", IntAttribute(1)}})), "cuda")
      << "ceil mode that adds no window";
  EXPECT_EQ(PlacedOn("MatMul", {{"a", {2, 3, 4}}, {"b", {2, 4, 5}}}), "cuda");
  EXPECT_EQ(PlacedOn("MatMul", {{"a", {4}}, {"b", {4, 5}}}), "cuda") << "1-D operands";
  EXPECT_EQ(PlacedOn("MatMul", {{"a", {2, 1, 3, 4}}, {"b", {1, 2, 4, 5}}}), "cpu") << "broadcast batch dims";
  EXPECT_EQ(PlacedOn("Relu", {{"x", {2, 2, 2, 2, 2, 2, 2, 2}}}), "cuda");
  EXPECT_EQ(PlacedOn("Relu", {{"x", {2, 2, 2, 2, 2, 2, 2, 2, 2}}}), "cpu") << "rank 9";
  EXPECT_EQ(PlacedOn("Dropout", {{"x", {4, 5}}}), "cuda");
  EXPECT_EQ(PlacedOn("Gather", {{"x", {4, 5}}, {"i", {3}}}, {}, 1, {{"i", DataType::kInt64}}), "cuda") << "a lookup of float rows";
  EXPECT_EQ(PlacedOn("Gather", {{"x", {4, 5}}, {"i", {3}}}, {}, 1, {{"x", DataType::kInt64}, {"i", DataType::kInt64}}), "cpu") << "integers: shape arithmetic";
  EXPECT_EQ(PlacedOn("Softmax", {{"x", {4, 5}}}), "cuda");
  EXPECT_EQ(PlacedOn("Concat", {{"a", {4, 5}}, {"b", {2, 5}}}, {{"axis", IntAttribute(0)}}), "cuda");
  const Dims tx = {1, 4, 5, 5}, tw = {4, 3, 3, 3};
  EXPECT_EQ(PlacedOn("ConvTranspose", {{"x", tx}, {"w", tw}},
                     {{"strides", IntsAttribute({2, 2})}, {"pads", IntsAttribute({1, 1, 1, 1})},
                      {"output_padding", IntsAttribute({1, 1})}}), "cuda");
  EXPECT_EQ(PlacedOn("ConvTranspose", {{"x", tx}, {"w", tw}}, {{"pads", IntsAttribute({0, 1, 1, 0})}}), "cpu")
      << "asymmetric padding";
  EXPECT_EQ(PlacedOn("ConvTranspose", {{"x", tx}, {"w", tw}},
                     {{"strides", IntsAttribute({2, 2})}, {"output_shape", IntsAttribute({13, 13})}}), "cpu")
      << "an output_shape past the natural size pads negatively";
  EXPECT_EQ(PlacedOn("Pad", {{"x", {2, 3}}, {"p", {4}}}, {{"mode", StringAttribute("reflect")}}, 1, {{"p", DataType::kInt64}}), "cuda");
}

// Equal and Where over a shape (a dynamic-axes export's Reshape target) stay with the
// shape arithmetic on the host: no copy to the GPU and back in the middle of a run.
TEST(PlacementPreview, ComparisonsOverShapesStayOnTheHost) {
  REQUIRE_CUDA_PLUGIN();
  Graph g;
  g.name = "reshape_by_where";
  g.opsets[""] = 13;
  g.inputs.push_back(ValueInfo{"x", DataType::kFloat, Shape::Of({4, 6})});
  g.initializers["zero"] = Tensor::FromVector<int64_t>({0, 0}, {2});
  g.initializers["fallback"] = Tensor::FromVector<int64_t>({2, 12}, {2});
  const auto add = [&g](const std::string& op, std::vector<std::string> in, const std::string& out, DataType t,
                        Dims dims) {
    Node n;
    n.name = out;
    n.op_type = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    g.nodes.push_back(n);
    g.value_info[out] = ValueInfo{out, t, Shape::Of(dims)};
  };
  add("Relu", {"x"}, "r", DataType::kFloat, {4, 6});
  add("Shape", {"r"}, "shape", DataType::kInt64, {2});
  add("Equal", {"shape", "zero"}, "is_zero", DataType::kBool, {2});
  add("Where", {"is_zero", "fallback", "shape"}, "target", DataType::kInt64, {2});
  add("Reshape", {"r", "target"}, "y", DataType::kFloat, {4, 6});
  g.value_info.erase("y");
  g.outputs.push_back(ValueInfo{"y", DataType::kFloat, Shape::Of({4, 6})});
  SessionOptions o;
  o.providers = {"cuda", "cpu"};
  o.placement_preview = true;
  o.constant_folding = o.fusion = false;
  auto s = Session::FromGraph(std::move(g), o);
  ASSERT_TRUE(s.ok()) << s.status();
  for (const Node& n : (*s)->graph().nodes) {
    if (n.op_type == "Equal" || n.op_type == "Where") EXPECT_EQ(n.provider, "cpu") << n.op_type;
    if (n.op_type == "Relu") EXPECT_EQ(n.provider, "cuda");
  }
  EXPECT_FALSE(Copied((*s)->graph()).count("is_zero")) << "the comparison's result went to the GPU";
  EXPECT_FALSE(Copied((*s)->graph()).count("target")) << "Where's result went to the GPU or back";
}

// Cast, comparisons, logic and Where run on the GPU for the element types its kernels
// take (typed_launch.h) and on the CPU for the others.
TEST(PlacementPreview, TypedOpsRunOnTheGpuForTheTypesItsKernelsTake) {
  REQUIRE_CUDA_PLUGIN();
  const auto cast_to = [](DataType to) { return std::map<std::string, Attribute>{{"to", IntAttribute(static_cast<int64_t>(to))}}; };
  EXPECT_EQ(PlacedOn("Cast", {{"x", {4, 5}}}, cast_to(DataType::kInt64), 1, {{"y0", DataType::kInt64}}), "cuda");
  EXPECT_EQ(PlacedOn("Cast", {{"x", {4, 5}}}, cast_to(DataType::kFloat), 1, {{"x", DataType::kBool}}), "cuda");
  EXPECT_EQ(PlacedOn("Cast", {{"x", {4, 5}}}, cast_to(DataType::kFloat16), 1, {{"y0", DataType::kFloat16}}), "cpu")
      << "to float16";
  EXPECT_EQ(PlacedOn("Cast", {{"x", {4, 5}}}, cast_to(DataType::kFloat), 1, {{"x", DataType::kFloat16}}), "cpu")
      << "from float16";
  const std::map<std::string, DataType> to_bool = {{"y0", DataType::kBool}};
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    EXPECT_EQ(PlacedOn(op, {{"a", {4, 5}}, {"b", {5}}}, {}, 1, to_bool), "cuda") << op;
  EXPECT_EQ(PlacedOn("Less", {{"a", {4, 5}}, {"b", {4, 5}}}, {}, 1,
                     {{"a", DataType::kInt64}, {"b", DataType::kInt64}, {"y0", DataType::kBool}}), "cuda")
      << "int64 data (not shape arithmetic: a bool result)";
  EXPECT_EQ(PlacedOn("Equal", {{"a", {4, 5}}, {"b", {5}}}, {}, 1,
                     {{"a", DataType::kFloat16}, {"b", DataType::kFloat16}, {"y0", DataType::kBool}}), "cpu")
      << "float16";
  const std::map<std::string, DataType> bools = {{"a", DataType::kBool}, {"b", DataType::kBool}, {"y0", DataType::kBool}};
  for (const char* op : {"And", "Or", "Xor"}) EXPECT_EQ(PlacedOn(op, {{"a", {4, 5}}, {"b", {4, 1}}}, {}, 1, bools), "cuda") << op;
  EXPECT_EQ(PlacedOn("Not", {{"a", {4, 5}}}, {}, 1, bools), "cuda");
  EXPECT_EQ(PlacedOn("Where", {{"c", {4, 1}}, {"x", {4, 5}}, {"y", {5}}}, {}, 1, {{"c", DataType::kBool}}), "cuda");
  EXPECT_EQ(PlacedOn("Where", {{"c", {4, 1}}, {"x", {4, 5}}, {"y", {5}}}, {}, 1,
                     {{"c", DataType::kBool}, {"x", DataType::kFloat16}, {"y", DataType::kFloat16}, {"y0", DataType::kFloat16}}),
            "cpu")
      << "float16 values";
}

}  // namespace
}  // namespace tandem
