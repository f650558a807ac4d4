#include "providers/cpu/rewrites/conv_input_scale.h"

#include <map>
#include <optional>
#include <set>

#include "graph/passes.h"
#include "graph/static_shape.h"
#include "graph/value_readers.h"
#include "framework/env_switch.h"
#include "providers/cpu/rewrites/convolution_node.h"

namespace tandem::cpu {
namespace {

// The constant 2-D float weights [O, C, kh, kw] of a one-group convolution that has no
// Scale, fused pool or residual sum yet; else null.
const Tensor* ScalableWeights(const Graph& g, const Node& conv) {
  if (!IsConvolution(conv) || conv.outputs.size() != 1 || !conv.has_input(1) || conv.has_input(3) || conv.has_input(4) ||
      conv.has_attr("pool") || conv.attr_int("group", 1) != 1)
    return nullptr;
  auto w = g.initializers.find(conv.inputs[1]);
  return w != g.initializers.end() && w->second.dtype() == DataType::kFloat && w->second.rank() == 4
             ? &w->second
             : nullptr;
}

// Whether `value` is a gate: written by a Sigmoid or HardSigmoid, alone or fused into the
// node before it, so finite and within [0, 1] (an infinite scale would turn the zero
// padding's 0 * W * s into NaN where Conv(X * s) has 0).
bool IsGate(const Graph& g, const std::map<std::string, size_t>& producers, const std::string& value) {
  auto it = producers.find(value);
  if (it == producers.end()) return false;
  const Node& p = g.nodes[it->second];
  const std::string op = p.domain.empty() ? p.op_type
                         : p.domain == kTandemDomain ? p.attr_string("activation", "")
                                                     : std::string();
  return op == "Sigmoid" || op == "HardSigmoid";
}

// For Mul(a, b): which operand is the gate S [1, C, 1, 1] and which the map X [1, C, H, W]
// (static shapes), as {X, S}; else nullopt.
std::optional<std::pair<std::string, std::string>> MapAndGate(const Graph& g,
                                                              const std::map<std::string, size_t>& producers,
                                                              const Node& mul, int64_t c) {
  for (int s = 0; s < 2; ++s) {
    const std::string &x = mul.inputs[1 - s], &gate = mul.inputs[s];
    const std::optional<Dims> xd = StaticDims(g, x), sd = StaticDims(g, gate);
    if (xd && sd && xd->size() == 4 && (*xd)[0] == 1 && (*xd)[1] == c && *sd == Dims{1, c, 1, 1} &&
        IsGate(g, producers, gate))
      return std::make_pair(x, gate);
  }
  return std::nullopt;
}

}  // namespace

int FuseConvInputScale(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes() || SwitchedOff("TANDEM_CPU_CONV_INPUT_SCALE")) return 0;
  const ValueReaders readers(graph);
  const std::map<std::string, size_t> producers = Producers(graph);
  std::set<size_t> folded;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& mul = graph.nodes[i];
    if (mul.provider != provider || !mul.domain.empty() || mul.op_type != "Mul" || mul.inputs.size() != 2 ||
        mul.outputs.size() != 1 || mul.inputs[0] == mul.inputs[1] || graph.ValueType(mul.outputs[0]) != DataType::kFloat)
      continue;
    const int ci = readers.Sole(mul.outputs[0]);
    if (ci < 0) continue;
    Node& conv = graph.nodes[static_cast<size_t>(ci)];
    const Tensor* w = ScalableWeights(graph, conv);
    if (conv.provider != provider || !w || conv.inputs[0] != mul.outputs[0]) continue;
    const auto operands = MapAndGate(graph, producers, mul, w->dim(1));
    if (!operands) continue;
    const Dims map = *StaticDims(graph, operands->first);
    // Scaling the weights costs more per value than the Mul (one more pass into the layout
    // oneDNN reads): on EfficientNet-B0 it gains where they are at most a quarter of the map.
    if (4 * w->dim(0) * w->dim(2) * w->dim(3) > map[2] * map[3]) continue;
    if (conv.op_type == "Conv") {  // the FusedConv kernel is Conv's, plus the Scale
      conv.op_type = "FusedConv";
      conv.domain = kTandemDomain;
    }
    conv.inputs[0] = operands->first;
    conv.inputs.resize(5);
    conv.inputs[4] = operands->second;
    conv.name = (mul.name.empty() ? mul.op_type : mul.name) + "+" + (conv.name.empty() ? conv.op_type : conv.name);
    folded.insert(i);
  }
  if (folded.empty()) return 0;
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  RemoveNodes(graph, folded);
  return static_cast<int>(folded.size());
}

}  // namespace tandem::cpu
