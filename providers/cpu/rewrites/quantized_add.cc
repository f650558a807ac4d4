#include "providers/cpu/rewrites/quantized_add.h"

#include <map>
#include <set>

#include "graph/passes.h"
#include "graph/value_readers.h"

namespace tandem::cpu {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

class QuantizedAddFusion {
 public:
  QuantizedAddFusion(Graph& graph, const std::string& provider)
      : graph_(graph), provider_(provider), producers_(Producers(graph)), readers_(graph) {}

  int Run() {
    int fused = 0;
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
      if (TryFuse(i)) ++fused;
    if (!fused) return 0;
    const ValueReaders after(graph_);
    for (size_t d : dequantizers_)
      if (after.nodes(graph_.nodes[d].outputs[0]).empty() && !after.pinned(graph_.nodes[d].outputs[0]))
        removed_.insert(d);
    RemoveNodes(graph_, removed_);
    if (!graph_.opsets.count(kTandemDomain)) graph_.opsets[kTandemDomain] = 1;
    return fused;
  }

 private:
  bool OnProvider(const Node& n, const char* op) const {
    return n.provider == provider_ && n.domain.empty() && n.op_type == op && n.outputs.size() == 1 &&
           n.attr_int("block_size", 0) == 0;
  }

  // Scale (float32) and zero point (8-bit) inputs 1 and 2 of `n`, each a one-value initializer.
  bool ScalarParams(const Node& n) const {
    if (!n.has_input(1) || !n.has_input(2)) return false;
    auto s = graph_.initializers.find(n.inputs[1]);
    auto z = graph_.initializers.find(n.inputs[2]);
    return s != graph_.initializers.end() && z != graph_.initializers.end() && s->second.dtype() == DataType::kFloat &&
           s->second.numel() == 1 && s->second.rank() <= 1 && Is8Bit(z->second.dtype()) && z->second.numel() == 1 &&
           z->second.rank() <= 1;
  }

  // The per-tensor DequantizeLinear on provider_ writing `value`, or null.
  const Node* Dequantizer(const std::string& value, size_t* index) const {
    auto it = producers_.find(value);
    if (it == producers_.end()) return nullptr;
    const Node& n = graph_.nodes[it->second];
    if (!OnProvider(n, "DequantizeLinear") || !ScalarParams(n)) return nullptr;
    *index = it->second;
    return &n;
  }

  bool TryFuse(size_t ai) {
    const Node& add = graph_.nodes[ai];
    const bool mul = OnProvider(add, "Mul");
    if (!(mul || OnProvider(add, "Add")) || add.inputs.size() != 2 || readers_.pinned(add.outputs[0])) return false;
    size_t ia = 0, ib = 0;
    const Node* da = Dequantizer(add.inputs[0], &ia);
    const Node* db = Dequantizer(add.inputs[1], &ib);
    const int r = readers_.Sole(add.outputs[0]);
    if (!da || !db || r < 0) return false;
    const Node& q = graph_.nodes[static_cast<size_t>(r)];
    if (!OnProvider(q, "QuantizeLinear") || !ScalarParams(q)) return false;
    Node fused;
    fused.name = add.name;
    fused.op_type = mul ? "QLinearMul" : "QLinearAdd";
    fused.domain = kTandemDomain;
    fused.provider = provider_;
    fused.inputs = {da->inputs[0], da->inputs[1], da->inputs[2], db->inputs[0],
                    db->inputs[1], db->inputs[2], q.inputs[1],   q.inputs[2]};
    fused.outputs = {q.outputs[0]};
    removed_.insert(static_cast<size_t>(r));
    dequantizers_.insert(ia);
    dequantizers_.insert(ib);
    graph_.nodes[ai] = std::move(fused);
    return true;
  }

  Graph& graph_;
  const std::string provider_;
  const std::map<std::string, size_t> producers_;
  const ValueReaders readers_;
  std::set<size_t> removed_, dequantizers_;
};

}  // namespace

int FuseQuantizedAdd(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  return QuantizedAddFusion(graph, provider).Run();
}

}  // namespace tandem::cpu
