#include "providers/cpu/rewrites/conv_sum.h"

#include <algorithm>
#include <set>

#include "graph/passes.h"
#include "graph/static_shape.h"
#include "graph/value_readers.h"
#include "providers/cpu/rewrites/convolution_node.h"

namespace tandem::cpu {
namespace {

// A convolution without a fused pool or activation (oneDNN's jit kernels take a sum
// post-op only first), with constant non-empty weights.
bool IsPlainConv(const Graph& g, const Node& n) {
  if (!IsConvolution(n) || n.has_attr("pool") || n.has_attr("activation") || n.has_input(3) || n.outputs.size() != 1 ||
      !n.has_output(0) || !n.has_input(1))
    return false;
  auto w = g.initializers.find(n.inputs[1]);
  return w != g.initializers.end() && w->second.numel() > 0;
}

bool IsOp(const Node& n, const std::string& provider, const char* op) {
  return n.provider == provider && n.domain.empty() && n.op_type == op && n.outputs.size() == 1;
}

bool IsGraphInput(const Graph& g, const std::string& v) {
  for (const ValueInfo& in : g.inputs)
    if (in.name == v) return true;
  return false;
}

std::string Joined(const Node& a, const Node& b) {
  return (a.name.empty() ? a.op_type : a.name) + "+" + (b.name.empty() ? b.op_type : b.name);
}

// On the final node order (fused nodes moved, others removed): a residual sum may write
// into s's buffer where it is s's last reader and s is a node's output nobody else needs.
void MarkInPlaceSums(Graph& graph) {
  const ValueReaders readers(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    if (n.domain != kTandemDomain || n.op_type != "FusedConv" || !n.has_input(3)) continue;
    const std::string& s = n.inputs[3];
    bool read_by_conv = false;  // in another input slot (X, W, B, Scale)
    for (size_t k = 0; k < n.inputs.size(); ++k) read_by_conv |= k != 3 && n.inputs[k] == s;
    const bool last_reader = readers.nodes(s).back() == i;
    if (!read_by_conv && last_reader && !readers.pinned(s) && !IsGraphInput(graph, s) && !graph.initializers.count(s))
      n.attributes["sum_in_place"] = IntAttribute(1);
    else
      n.attributes.erase("sum_in_place");
  }
}

}  // namespace

int FuseConvResidualSum(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  const ValueReaders readers(graph);
  std::set<size_t> removed;  // convolutions moved to their Add's place, folded Relus
  int fused = 0;
  for (size_t ci = 0; ci < graph.nodes.size(); ++ci) {
    const Node& conv = graph.nodes[ci];
    if (conv.provider != provider || !IsPlainConv(graph, conv) || graph.ValueType(conv.outputs[0]) != DataType::kFloat)
      continue;
    const int ai = readers.Sole(conv.outputs[0]);
    if (ai < 0) continue;
    const Node& add = graph.nodes[static_cast<size_t>(ai)];
    if (!IsOp(add, provider, "Add") || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) continue;
    const std::string skip = add.inputs[0] == conv.outputs[0] ? add.inputs[1] : add.inputs[0];
    if (skip.empty() || !SameStaticShape(graph, conv.outputs[0], skip) || !SameStaticShape(graph, skip, add.outputs[0]))
      continue;
    // The fused node runs where the Add ran: s may be computed after the convolution.
    Node sum = conv;
    if (sum.domain.empty()) {  // the FusedConv kernel is Conv's, plus the fused parts
      sum.op_type = "FusedConv";
      sum.domain = kTandemDomain;
    }
    sum.inputs.resize(std::max<size_t>(sum.inputs.size(), 4));  // a Scale (input 4) stays
    sum.inputs[3] = skip;
    sum.outputs[0] = add.outputs[0];
    sum.name = Joined(conv, add);
    const int ri = readers.Sole(add.outputs[0]);
    if (ri >= 0 && IsOp(graph.nodes[static_cast<size_t>(ri)], provider, "Relu") &&
        graph.nodes[static_cast<size_t>(ri)].inputs.size() == 1) {
      const Node& relu = graph.nodes[static_cast<size_t>(ri)];
      sum.attributes["sum_activation"] = StringAttribute("Relu");
      sum.outputs[0] = relu.outputs[0];
      sum.name = Joined(sum, relu);
      removed.insert(static_cast<size_t>(ri));
    }
    removed.insert(ci);
    graph.nodes[static_cast<size_t>(ai)] = std::move(sum);
    ++fused;
  }
  if (!fused) return 0;
  RemoveNodes(graph, removed);
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  MarkInPlaceSums(graph);
  return fused;
}

}  // namespace tandem::cpu
