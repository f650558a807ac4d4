#include "runtime/dense_chain_fusion.h"

#include <algorithm>
#include <optional>
#include <set>

#include "graph/value_readers.h"

namespace tandem {
namespace {

constexpr char kDomain[] = "ai.tandem";

// Shape of an initializer or typed graph value, when float32 and fully known.
std::optional<Dims> FloatDims(const Graph& g, const std::string& v) {
  if (auto it = g.initializers.find(v); it != g.initializers.end())
    return it->second.dtype() == DataType::kFloat ? std::optional<Dims>(it->second.dims()) : std::nullopt;
  const ValueInfo* vi = g.FindValueInfo(v);
  if (!vi || vi->dtype != DataType::kFloat || !vi->shape.rank_known) return std::nullopt;
  Dims d;
  for (const Dim& x : vi->shape.dims) {
    if (!x.known()) return std::nullopt;
    d.push_back(x.value);
  }
  return d;
}

// Whether node n is a Gemm that DenseChain computes (see the header).
bool IsLayer(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.op_type != "Gemm" || n.inputs.size() != 3 || !n.has_input(2) ||
      !n.has_output(0) || n.outputs.size() != 1)
    return false;
  if (n.attr_int("transA", 0) != 0 || n.attr_float("alpha", 1.f) != 1.f || n.attr_float("beta", 1.f) != 1.f)
    return false;
  auto w = FloatDims(g, n.inputs[1]);
  auto b = FloatDims(g, n.inputs[2]);
  if (!w || !b || w->size() != 2 || NumElements(*w) > kMaxDenseChainWeights) return false;
  const int64_t out = (*w)[n.attr_int("transB", 0) ? 0 : 1];
  return (b->size() == 1 && (*b)[0] == out) || (b->size() == 2 && (*b)[0] == 1 && (*b)[1] == out);
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
    if (removed.count(k) || !IsLayer(graph, graph.nodes[k])) continue;
    Node chain;
    chain.op_type = "DenseChain";
    chain.domain = kDomain;
    chain.name = graph.nodes[k].name + "/DenseChain";
    chain.inputs = {graph.nodes[k].inputs[0]};
    std::vector<std::string> acts;
    std::vector<int64_t> trans_b;
    std::vector<size_t> members;
    size_t last = k;
    for (int layer = static_cast<int>(k); layer >= 0;) {
      const Node& gemm = graph.nodes[layer];
      members.push_back(layer);
      chain.inputs.push_back(gemm.inputs[1]);
      chain.inputs.push_back(gemm.inputs[2]);
      trans_b.push_back(gemm.attr_int("transB", 0) ? 1 : 0);
      std::string out = gemm.outputs[0];
      last = layer;
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
      const bool continues = next >= 0 && !removed.count(next) && IsLayer(graph, graph.nodes[next]) &&
                             graph.nodes[next].inputs[0] == out;
      layer = continues ? next : -1;
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
  graph.opsets[kDomain] = std::max(graph.opset(kDomain), 1);
  return fused;
}

}  // namespace tandem
