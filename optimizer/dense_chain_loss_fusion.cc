#include "optimizer/dense_chain_loss_fusion.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "graph/value_readers.h"

namespace tandem {
namespace {

bool Is(const Node& n, const char* op) { return n.domain == kTandemDomain && n.op_type == op; }

// The nodes of one foldable step (indices into graph.nodes).
struct Step {
  size_t chain, loss, seed, loss_grad, chain_grad;
};

bool SameLayers(const Node& a, const Node& b) {
  return a.attr_strings("activations") == b.attr_strings("activations") &&
         a.attr_ints("trans_b", {}) == b.attr_ints("trans_b", {});
}

// Whether the DenseChain at `c` starts a step to fold (filled into `step`).
bool MatchStep(const Graph& g, const ValueReaders& readers, const std::map<std::string, size_t>& producer,
               size_t c, Step& step) {
  const Node& chain = g.nodes[c];
  if (!Is(chain, "DenseChain") || !chain.has_output(0)) return false;
  const std::string& y = chain.outputs[0];
  const std::vector<size_t>& y_readers = readers.nodes(y);
  if (readers.pinned(y) || y_readers.size() != 2) return false;
  const size_t m = y_readers[0], mg = y_readers[1];
  const Node& loss = g.nodes[m];
  const Node& loss_grad = g.nodes[mg];
  if (!Is(loss, "MSELoss") || loss.inputs.size() != 2 || loss.inputs[0] != y || !loss.has_output(0)) return false;
  const std::string& target = loss.inputs[1];
  const std::string reduction = loss.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum") return false;
  if (!Is(loss_grad, "MSELossGrad") || loss_grad.inputs.size() != 3 || loss_grad.inputs[1] != y ||
      loss_grad.inputs[2] != target || loss_grad.attr_string("reduction", "mean") != reduction ||
      !loss_grad.has_output(0))
    return false;
  if (loss_grad.outputs.size() > 1 && loss_grad.has_output(1) &&
      (readers.pinned(loss_grad.outputs[1]) || !readers.nodes(loss_grad.outputs[1]).empty()))
    return false;
  // The seed dL = 1 of the loss's shape, read only here.
  auto seed = producer.find(loss_grad.inputs[0]);
  if (seed == producer.end() || readers.Sole(loss_grad.inputs[0]) != static_cast<int>(mg)) return false;
  const Node& s = g.nodes[seed->second];
  if (!Is(s, "ScalarLike") || s.inputs.size() != 1 || s.inputs[0] != loss.outputs[0] ||
      s.attr_float("value", 0.f) != 1.f)
    return false;
  // dY feeds only the chain's own gradient.
  const int cg = readers.Sole(loss_grad.outputs[0]);
  if (cg < 0) return false;
  const Node& chain_grad = g.nodes[cg];
  if (!Is(chain_grad, "DenseChainGrad") || chain_grad.inputs.size() != chain.inputs.size() + 1 ||
      chain_grad.inputs[0] != loss_grad.outputs[0] ||
      !std::equal(chain.inputs.begin(), chain.inputs.end(), chain_grad.inputs.begin() + 1) ||
      !SameLayers(chain, chain_grad))
    return false;
  // The folded node stands where the chain was, so the target must exist by then.
  if (auto t = producer.find(target); t != producer.end() && t->second > c) return false;
  step = Step{c, m, seed->second, mg, static_cast<size_t>(cg)};
  return true;
}

}  // namespace

int FuseDenseChainMseLoss(Graph& graph) {
  const ValueReaders readers(graph);
  const std::map<std::string, size_t> producer = Producers(graph);
  std::set<size_t> removed;
  std::map<size_t, Node> folded;  // by the index of the chain it replaces
  for (size_t c = 0; c < graph.nodes.size(); ++c) {
    Step s;
    if (!MatchStep(graph, readers, producer, c, s)) continue;
    const Node& chain = graph.nodes[s.chain];
    const Node& chain_grad = graph.nodes[s.chain_grad];
    Node n;
    n.op_type = "DenseChainMseGrad";
    n.domain = kTandemDomain;
    n.name = chain.name + "/MseGrad";
    n.inputs = {chain.inputs[0], graph.nodes[s.loss].inputs[1]};
    n.inputs.insert(n.inputs.end(), chain.inputs.begin() + 1, chain.inputs.end());
    n.outputs = {graph.nodes[s.loss].outputs[0]};
    n.outputs.insert(n.outputs.end(), chain_grad.outputs.begin(), chain_grad.outputs.end());
    n.attributes = chain.attributes;
    n.attributes["reduction"] = StringAttribute(graph.nodes[s.loss].attr_string("reduction", "mean"));
    folded.emplace(c, std::move(n));
    removed.insert({s.chain, s.loss, s.seed, s.loss_grad, s.chain_grad});
  }
  if (folded.empty()) return 0;
  std::vector<Node> nodes;
  for (size_t k = 0; k < graph.nodes.size(); ++k) {
    if (auto f = folded.find(k); f != folded.end()) nodes.push_back(std::move(f->second));
    else if (!removed.count(k)) nodes.push_back(std::move(graph.nodes[k]));
  }
  graph.nodes = std::move(nodes);
  return static_cast<int>(folded.size());
}

}  // namespace tandem
