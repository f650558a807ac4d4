#include "optimizer/activation_fusion.h"

#include <cmath>
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

// A Reshape of one tensor (its shape an input), whose output an element-wise activation may
// be computed before it instead of after.
bool IsPlainReshape(const Node& n) {
  return n.domain.empty() && n.op_type == "Reshape" && n.inputs.size() == 2 && n.outputs.size() == 1 &&
         n.has_output(0);
}

// A self-gated activation as exporters write it, x * g(x): SiLU's x * Sigmoid(x) (fused as
// Swish with alpha 1), Mish's x * Tanh(Softplus(x)) (the legacy exporter's Mish) and
// HardSwish's x * HardSigmoid(x) with alpha 1/6 and beta 0.5 (tf2onnx's, once
// hard_sigmoid_folding.h has made the HardSigmoid).
struct SelfGate {
  std::string activation;     // what the fused node applies: "Swish", "Mish" or "HardSwish"
  std::vector<int> gate;      // the gate's nodes, first to last
  int mul = -1;               // the Mul of x and the gate's output; -1: no match
};

// When `value`'s only readers are a gate's first node and a Mul of `value` and the gate's
// output (in either order), each later gate node and the Mul alone reading what comes
// before them, returns the match; else one with mul = -1.
SelfGate SelfGateReaders(const Graph& graph, const ValueReaders& readers, const std::string& value) {
  const std::vector<size_t>& r = readers.nodes(value);
  if (readers.pinned(value) || r.size() != 2) return {};
  auto plain = [&](int k, const char* op) {
    const Node& n = graph.nodes[k];
    return n.domain.empty() && n.op_type == op && n.inputs.size() == 1 && n.outputs.size() == 1;
  };
  for (int s : {0, 1}) {
    SelfGate g;
    const int first = static_cast<int>(r[s]);
    if (plain(first, "Sigmoid")) {
      g = {"Swish", {first}};
    } else if (plain(first, "Softplus")) {
      const int tanh = readers.Sole(graph.nodes[first].outputs[0]);
      if (tanh < 0 || !plain(tanh, "Tanh")) continue;
      g = {"Mish", {first, tanh}};
    } else if (plain(first, "HardSigmoid") &&
               std::abs(graph.nodes[first].attr_float("alpha", 0.2f) - 1.f / 6) < 1e-7f &&
               graph.nodes[first].attr_float("beta", 0.5f) == 0.5f) {
      g = {"HardSwish", {first}};
    } else {
      continue;
    }
    const int mul = static_cast<int>(r[1 - s]);
    const Node& m = graph.nodes[mul];
    const std::string& gated = graph.nodes[g.gate.back()].outputs[0];
    if (!m.domain.empty() || m.op_type != "Mul" || m.inputs.size() != 2 || m.outputs.size() != 1 ||
        readers.Sole(gated) != mul || std::set<std::string>(m.inputs.begin(), m.inputs.end()) !=
                                          std::set<std::string>{value, gated})
      continue;
    g.mul = mul;
    return g;
  }
  return {};
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
    // A product reshaped before its activation (GPT-2's Conv1D: Reshape, Gemm, Reshape,
    // GELU): the element-wise activation moves before the Reshape, into the product.
    const int reshape = n.op_type != "Conv" && next >= 0 && IsPlainReshape(graph.nodes[next]) ? next : -1;
    if (const int act = reshape >= 0 ? sole_reader(graph.nodes[reshape].outputs[0]) : -1;
        act >= 0 && DescribeFusedActivation(graph, graph.nodes[act], f, fusable)) {
      removed.insert(act);
      f.name += "+" + NameOf(graph.nodes[act]);
      graph.nodes[reshape].outputs = graph.nodes[act].outputs;
      next = -1;
    } else if (next >= 0 && DescribeFusedActivation(graph, graph.nodes[next], f, fusable)) {
      removed.insert(next);
      f.name += "+" + NameOf(graph.nodes[next]);
      f.outputs = graph.nodes[next].outputs;
      next = sole_reader(f.outputs[0]);
    } else if (SelfGate g = fusable == FusableActivations::kCpu ? SelfGateReaders(graph, readers, f.outputs[0])
                                                               : SelfGate{};
               g.mul >= 0) {
      SetFusedActivation(f, g.activation, g.activation == "Swish" ? 1.f : 0.f, 0.f);
      g.gate.push_back(g.mul);
      for (int k : g.gate) {
        removed.insert(k);
        f.name += "+" + NameOf(graph.nodes[k]);
      }
      f.outputs = graph.nodes[g.mul].outputs;
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
    if (f.outputs == n.outputs && !f.has_attr("activation")) continue;
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
