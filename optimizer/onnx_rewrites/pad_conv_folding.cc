#include "optimizer/onnx_rewrites/pad_conv_folding.h"

#include <optional>
#include <set>
#include <vector>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {
namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// The pads of Pad `n` of a rank-`rank` value, [begin..., end...], when they are constant,
// non-negative, zero on N and C, the mode is constant and the value zero (or absent); else nullopt.
std::optional<std::vector<int64_t>> SpatialZeroPads(const Graph& graph, const Node& n, int rank) {
  if (n.attr_string("mode", "constant") != "constant") return std::nullopt;
  std::optional<std::vector<int64_t>> pads = rewrite::PadAmounts(graph, n);
  if (!pads) return std::nullopt;
  if (graph.opset("") >= 11) {
    if (n.has_input(2)) {
      const Tensor* value = Constant(graph, n.inputs[2]);
      if (!value || value->numel() != 1 || value->ElementAsDouble(0) != 0.0) return std::nullopt;
    }
    if (n.has_input(3)) return std::nullopt;  // axes (opset 18): not written by the exporters seen
  } else if (n.attr_float("value", 0.f) != 0.f) {
    return std::nullopt;
  }
  const std::vector<int64_t>& p = *pads;
  if (static_cast<int>(p.size()) != 2 * rank) return std::nullopt;
  for (int64_t v : p)
    if (v < 0) return std::nullopt;
  if (p[0] || p[1] || p[rank] || p[rank + 1]) return std::nullopt;
  return pads;
}

}  // namespace

int FoldPadsIntoConvs(Graph& graph) {
  const ValueReaders readers(graph);
  std::set<size_t> removed;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    const Node& pad = graph.nodes[k];
    if (!IsOnnx(pad, "Pad") || !pad.has_input(0) || !pad.has_output(0) || pad.outputs.size() != 1) continue;
    const int reader = readers.Sole(pad.outputs[0]);
    if (reader < 0) continue;
    Node& conv = graph.nodes[reader];
    if (!IsOnnx(conv, "Conv") || conv.inputs[0] != pad.outputs[0] || conv.attr_string("auto_pad", "NOTSET") != "NOTSET")
      continue;
    const Tensor* w = conv.has_input(1) ? Constant(graph, conv.inputs[1]) : nullptr;
    const Shape* x = rewrite::KnownShape(graph, pad.inputs[0]);
    const int rank = w ? w->rank() : x ? static_cast<int>(x->dims.size()) : 0;
    if (rank < 3) continue;
    const std::optional<std::vector<int64_t>> pads = SpatialZeroPads(graph, pad, rank);
    if (!pads) continue;
    const int spatial = rank - 2;
    std::vector<int64_t> own = conv.attr_ints("pads");
    if (own.empty()) own.assign(2 * spatial, 0);
    if (static_cast<int>(own.size()) != 2 * spatial) continue;
    for (int i = 0; i < spatial; ++i) {
      own[i] += (*pads)[2 + i];
      own[spatial + i] += (*pads)[rank + 2 + i];
    }
    conv.attributes["pads"] = IntsAttribute(own);
    conv.inputs[0] = pad.inputs[0];
    removed.insert(k);
  }
  RemoveNodes(graph, removed);
  return static_cast<int>(removed.size());
}

}  // namespace tandem
