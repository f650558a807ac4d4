#include "optimizer/dense_chain_fusion.h"

#include <algorithm>
#include <optional>
#include <set>

#include "graph/static_shape.h"
#include "graph/value_readers.h"

namespace tandem {
namespace {

// Shape of an initializer or typed graph value, when float32 and fully known.
std::optional<Dims> FloatDims(const Graph& g, const std::string& v) {
  return g.ValueType(v) == DataType::kFloat ? StaticDims(g, v) : std::nullopt;
}

// One dense layer of a chain: a Gemm, or a MatMul followed by an Add of the bias.
struct LayerMatch {
  std::vector<size_t> nodes;  // the layer's nodes (an activation is added by the caller)
  std::string input, weight, bias, output;
  int64_t trans_b = 0;
};

// Whether the bias `b` holds one value per output column `out` ([N] or [1, N]).
bool IsBias(const Graph& g, const std::string& b, int64_t out) {
  auto dims = FloatDims(g, b);
  return dims && ((dims->size() == 1 && (*dims)[0] == out) ||
                  (dims->size() == 2 && (*dims)[0] == 1 && (*dims)[1] == out));
}

// A float32 weight matrix of known shape, small enough to stay in cache.
std::optional<Dims> WeightDims(const Graph& g, const std::string& w) {
  auto dims = FloatDims(g, w);
  if (!dims || dims->size() != 2 || NumElements(*dims) > kMaxDenseChainWeights) return std::nullopt;
  return dims;
}

// The layer that node k starts (see the header), if any.
std::optional<LayerMatch> MatchLayer(const Graph& g, const ValueReaders& readers, size_t k) {
  const Node& n = g.nodes[k];
  if (!n.domain.empty() || !n.has_output(0) || n.outputs.size() != 1) return std::nullopt;
  if (n.op_type == "Gemm") {
    if (n.inputs.size() != 3 || !n.has_input(2) || n.attr_int("transA", 0) != 0 ||
        n.attr_float("alpha", 1.f) != 1.f || n.attr_float("beta", 1.f) != 1.f)
      return std::nullopt;
    auto w = WeightDims(g, n.inputs[1]);
    const int64_t trans_b = n.attr_int("transB", 0) ? 1 : 0;
    if (!w || !IsBias(g, n.inputs[2], (*w)[trans_b ? 0 : 1])) return std::nullopt;
    return LayerMatch{{k}, n.inputs[0], n.inputs[1], n.inputs[2], n.outputs[0], trans_b};
  }
  // MatMul(A, W) + B (Keras / tf2onnx Dense, PyTorch Linear without Gemm): A must be a
  // matrix, since the chain's kernels take [M, K] rows.
  if (n.op_type != "MatMul" || n.inputs.size() != 2) return std::nullopt;
  const ValueInfo* a = g.FindValueInfo(n.inputs[0]);
  auto w = WeightDims(g, n.inputs[1]);
  if (!a || !a->shape.rank_known || a->shape.dims.size() != 2 || !w) return std::nullopt;
  const int add = readers.Sole(n.outputs[0]);
  if (add < 0) return std::nullopt;
  const Node& sum = g.nodes[add];
  if (!sum.domain.empty() || sum.op_type != "Add" || sum.inputs.size() != 2 || !sum.has_output(0)) return std::nullopt;
  const std::string& bias = sum.inputs[0] == n.outputs[0] ? sum.inputs[1] : sum.inputs[0];
  if (!IsBias(g, bias, (*w)[1])) return std::nullopt;
  return LayerMatch{{k, static_cast<size_t>(add)}, n.inputs[0], n.inputs[1], bias, sum.outputs[0], 0};
}

bool IsActivation(const Node& n) {
  return n.domain.empty() && (n.op_type == "Relu" || n.op_type == "Tanh" || n.op_type == "Sigmoid") &&
         n.inputs.size() == 1 && n.has_output(0);
}

}  // namespace

int FuseDenseChains(Graph& graph, int min_layers) {
  if (!graph.SortTopologically().ok()) return 0;
  const ValueReaders readers(graph);
  std::set<size_t> removed;
  std::vector<std::pair<size_t, Node>> chains;  // placed where the chain's last node was
  int fused = 0;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    if (removed.count(k)) continue;
    std::optional<LayerMatch> layer = MatchLayer(graph, readers, k);
    if (!layer) continue;
    Node chain;
    chain.op_type = "DenseChain";
    chain.domain = kTandemDomain;
    chain.name = graph.nodes[k].name + "/DenseChain";
    chain.inputs = {layer->input};
    std::vector<std::string> acts;
    std::vector<int64_t> trans_b;
    std::vector<size_t> members;
    size_t last = k;
    while (layer) {
      members.insert(members.end(), layer->nodes.begin(), layer->nodes.end());
      chain.inputs.push_back(layer->weight);
      chain.inputs.push_back(layer->bias);
      trans_b.push_back(layer->trans_b);
      std::string out = layer->output;
      last = layer->nodes.back();
      acts.push_back("Identity");
      int next = readers.Sole(out);
      if (next >= 0 && IsActivation(graph.nodes[next])) {
        acts.back() = graph.nodes[next].op_type;
        members.push_back(next);
        out = graph.nodes[next].outputs[0];
        last = next;
        next = readers.Sole(out);
      }
      chain.outputs = {out};
      layer.reset();
      if (next >= 0 && !removed.count(next))
        if (auto following = MatchLayer(graph, readers, next); following && following->input == out)
          layer = following;
    }
    if (static_cast<int>(trans_b.size()) < min_layers) continue;
    chain.attributes["activations"].kind = Attribute::Kind::kStrings;
    chain.attributes["activations"].strings = acts;
    chain.attributes["trans_b"] = IntsAttribute(trans_b);
    removed.insert(members.begin(), members.end());
    fused += static_cast<int>(trans_b.size());
    chains.emplace_back(last, std::move(chain));
  }
  if (chains.empty()) return 0;
  std::stable_sort(chains.begin(), chains.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Node> nodes;
  size_t c = 0;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    if (!removed.count(k)) nodes.push_back(std::move(graph.nodes[k]));
    for (; c < chains.size() && chains[c].first == k; ++c) nodes.push_back(std::move(chains[c].second));
  }
  graph.nodes = std::move(nodes);
  graph.opsets[kTandemDomain] = std::max(graph.opset(kTandemDomain), 1);
  return fused;
}

}  // namespace tandem
