#include "optimizer/activation_fusion.h"

#include <map>
#include <set>
#include <utility>

#include "graph/value_readers.h"
#include "ops/fused_activation_attributes.h"

namespace tandem {

namespace {

const std::map<std::string, std::string> kFusedOp = {
    {"Conv", "FusedConv"}, {"Gemm", "FusedGemm"}, {"MatMul", "FusedMatMul"}};

// A MaxPool that MaxPool2x2 (providers/cpu/microkernels/max_pool_2x2.h) computes: 2x2 window,
// stride 2, no padding, floor mode, no Indices output.
bool IsMaxPool2x2(const Node& n) {
  if (!n.domain.empty() || n.op_type != "MaxPool" || n.has_output(1) || !n.has_output(0))
    return false;
  const std::vector<int64_t> two = {2, 2}, one = {1, 1};
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  for (int64_t p : n.attr_ints("pads", {0, 0, 0, 0}))
    if (p != 0) return false;
  return n.attr_ints("kernel_shape") == two && n.attr_ints("strides", one) == two &&
         n.attr_ints("dilations", one) == one && n.attr_int("ceil_mode", 0) == 0 &&
         (auto_pad == "NOTSET" || auto_pad == "VALID");
}

std::string NameOf(const Node& n) { return n.name.empty() ? n.op_type : n.name; }

// SiLU as exporters write it, x * Sigmoid(x): when `value`'s only readers are a Sigmoid
// and a Mul of `value` and that Sigmoid's output (in either order), which alone reads it,
// returns the two node indices; else {-1, -1}.
std::pair<int, int> SiluReaders(const Graph& graph, const ValueReaders& readers, const std::string& value) {
  const std::vector<size_t>& r = readers.nodes(value);
  if (readers.pinned(value) || r.size() != 2) return {-1, -1};
  for (int s : {0, 1}) {
    const Node& sigmoid = graph.nodes[r[s]];
    const Node& mul = graph.nodes[r[1 - s]];
    if (!sigmoid.domain.empty() || sigmoid.op_type != "Sigmoid" || sigmoid.outputs.size() != 1 ||
        !mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1 ||
        readers.Sole(sigmoid.outputs[0]) != static_cast<int>(r[1 - s]))
      continue;
    const std::set<std::string> operands(mul.inputs.begin(), mul.inputs.end());
    if (operands == std::set<std::string>{value, sigmoid.outputs[0]})
      return {static_cast<int>(r[s]), static_cast<int>(r[1 - s])};
  }
  return {-1, -1};
}

// Training graphs: ReluGrad(G(dY, X, ...):0, X) — X a Relu output read by MaxPool, Conv or
// ConvTranspose, G its MaxPoolGrad / ConvGrad / ConvTransposeGrad — becomes G with
// relu_mask = 1 (dX also zeroed where X <= 0), when dX has no other reader. Returns the
// number of fusions.
int FuseReluGradIntoBackward(Graph& graph) {
  const ValueReaders readers(graph);
  std::set<size_t> removed;
  for (Node& n : graph.nodes) {
    if (n.domain != kTandemDomain ||
        (n.op_type != "MaxPoolGrad" && n.op_type != "ConvGrad" && n.op_type != "ConvTransposeGrad") ||
        !n.has_output(0) || n.inputs.size() < 2 || !n.has_input(1) || n.attr_int("relu_mask", 0))
      continue;
    const std::string& out = n.outputs[0];
    const int r = readers.Sole(out);
    if (r < 0) continue;
    const Node& rg = graph.nodes[r];
    if (rg.domain != kTandemDomain || rg.op_type != "ReluGrad" || rg.inputs.size() != 2 ||
        rg.inputs[0] != out || rg.inputs[1] != n.inputs[1] || rg.outputs.size() != 1)
      continue;
    Attribute mask;
    mask.kind = Attribute::Kind::kInt;
    mask.i = 1;
    n.attributes["relu_mask"] = mask;
    n.name = NameOf(n) + "+" + NameOf(rg);
    n.outputs[0] = rg.outputs[0];
    removed.insert(r);
  }
  if (removed.empty()) return 0;
  std::vector<Node> kept;
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    if (!removed.count(k)) kept.push_back(std::move(graph.nodes[k]));
  graph.nodes = std::move(kept);
  return static_cast<int>(removed.size());
}

}  // namespace

int FuseActivations(Graph& graph, FusableActivations fusable) {
  const int relu_grads = FuseReluGradIntoBackward(graph);
  const ValueReaders readers(graph);

  std::set<size_t> removed;
  int fused = 0;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    Node& n = graph.nodes[k];
    if (removed.count(k)) continue;
    auto op = kFusedOp.find(n.op_type);
    if (!n.domain.empty() || op == kFusedOp.end() || n.outputs.size() != 1 || !n.has_output(0) ||
        !n.has_input(0) || graph.ValueType(n.inputs[0]) != DataType::kFloat)
      continue;
    Node f = n;
    f.name = NameOf(n);
    // Index of the node that alone reads `value` as its first input, or -1.
    auto sole_reader = [&](const std::string& value) -> int {
      const int k = readers.Sole(value);
      if (k < 0) return -1;
      const Node& r = graph.nodes[k];
      return r.inputs[0] == value && r.outputs.size() == 1 ? k : -1;
    };
    int next = sole_reader(f.outputs[0]);
    if (next >= 0 && DescribeFusedActivation(graph, graph.nodes[next], f, fusable)) {
      removed.insert(next);
      f.name += "+" + NameOf(graph.nodes[next]);
      f.outputs = graph.nodes[next].outputs;
      next = sole_reader(f.outputs[0]);
    } else if (auto [sigmoid, mul] = fusable == FusableActivations::kCpu ? SiluReaders(graph, readers, f.outputs[0])
                                                                        : std::pair{-1, -1};
               mul >= 0) {
      SetFusedActivation(f, "Swish", 1.f, 0.f);
      removed.insert(sigmoid);
      removed.insert(mul);
      f.name += "+" + NameOf(graph.nodes[sigmoid]) + "+" + NameOf(graph.nodes[mul]);
      f.outputs = graph.nodes[mul].outputs;
      next = sole_reader(f.outputs[0]);
    }
    if (n.op_type == "Conv" && next >= 0 && IsMaxPool2x2(graph.nodes[next])) {
      removed.insert(next);
      Attribute pool;
      pool.kind = Attribute::Kind::kString;
      pool.s = "MaxPool2x2";
      f.attributes["pool"] = pool;
      f.name += "+" + NameOf(graph.nodes[next]);
      f.outputs = graph.nodes[next].outputs;
    }
    if (f.outputs == n.outputs) continue;
    f.op_type = op->second;
    f.domain = kTandemDomain;
    n = std::move(f);
    ++fused;
  }
  if (!fused) return relu_grads;
  std::vector<Node> kept;
  for (size_t k = 0; k < graph.nodes.size(); ++k)
    if (!removed.count(k)) kept.push_back(std::move(graph.nodes[k]));
  graph.nodes = std::move(kept);
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  return fused + relu_grads;
}

}  // namespace tandem
