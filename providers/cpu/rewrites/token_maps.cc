#include "providers/cpu/rewrites/token_maps.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "graph/passes.h"
#include "graph/value_readers.h"
#include "providers/cpu/channel_block.h"

namespace tandem::cpu {
namespace {

class TokenMaps {
 public:
  TokenMaps(Graph& graph, const std::string& provider) : graph_(graph), provider_(provider) {}

  int Run() {
    const std::map<std::string, size_t> producers = Producers(graph_);
    std::vector<std::pair<size_t, Node>> inserted;  // Reshapes to place before node index
    int rewritten = 0;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      Node& n = graph_.nodes[i];
      if (n.provider != provider_ || n.inputs.empty() || n.outputs.size() != 1) continue;
      const bool conv = n.domain == kTandemDomain && n.op_type == "FusedConv" &&
                        n.attr_int("channel_block", 0) == kChannelsLast;
      const bool to_blocked = n.domain == kTandemDomain && n.op_type == "ToBlocked" &&
                              n.attr_int("channel_block", 0) == kChannelsLast;
      if (conv || to_blocked) {
        std::optional<std::string> tokens = TokensOfMap(n.inputs[0], producers);
        if (!tokens) continue;
        const Dims map = *StaticDims(n.inputs[0]);  // [N, C, H, W]
        const Dims stored = {map[0], 1, map[2], map[3], map[1]};
        if (to_blocked) {
          MakeReshape(n, *tokens, stored);
        } else {
          Node r;
          r.name = n.inputs[0] + "/as_tokens";
          r.provider = provider_;
          const std::string value = UnusedValueName(graph_, n.inputs[0] + "#tokens");
          r.outputs = {value};
          MakeReshape(r, *tokens, stored);
          n.inputs[0] = value;
          inserted.emplace_back(i, std::move(r));
        }
        ++rewritten;
        continue;
      }
      if (n.domain.empty() && n.op_type == "Transpose" && SwapsLastTwo(n)) {
        std::optional<std::string> blocked = BlockedOfTokens(n, producers);
        if (!blocked) continue;
        const Dims tokens = *StaticDims(n.outputs[0]);
        MakeReshape(n, *blocked, tokens);
        ++rewritten;
      }
    }
    if (!rewritten) return 0;
    std::vector<Node> nodes;
    nodes.reserve(graph_.nodes.size() + inserted.size());
    size_t next = 0;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      for (; next < inserted.size() && inserted[next].first == i; ++next) nodes.push_back(std::move(inserted[next].second));
      nodes.push_back(std::move(graph_.nodes[i]));
    }
    graph_.nodes = std::move(nodes);
    RemoveUnread();
    return rewritten;
  }

 private:
  // The static dims of `value`, or nullopt.
  std::optional<Dims> StaticDims(const std::string& value) const {
    const ValueInfo* vi = graph_.FindValueInfo(value);
    if (!vi || !vi->shape.rank_known) return std::nullopt;
    Dims d;
    for (const Dim& dim : vi->shape.dims) {
      if (!dim.known()) return std::nullopt;
      d.push_back(dim.value);
    }
    return d;
  }

  static bool SwapsLastTwo(const Node& t) { return t.attr_ints("perm") == std::vector<int64_t>{0, 2, 1}; }

  const Node* ProducerOf(const std::string& value, const std::map<std::string, size_t>& producers) const {
    auto it = producers.find(value);
    if (it == producers.end()) return nullptr;
    const Node& p = graph_.nodes[it->second];
    return p.provider == provider_ ? &p : nullptr;
  }

  // t when `map` = Reshape(Transpose(t, 0 2 1)) with t [N, HW, C] and map [N, C, H, W].
  std::optional<std::string> TokensOfMap(const std::string& map, const std::map<std::string, size_t>& producers) const {
    const Node* reshape = ProducerOf(map, producers);
    if (!reshape || !reshape->domain.empty() || reshape->op_type != "Reshape" || reshape->inputs.empty()) return std::nullopt;
    const Node* transpose = ProducerOf(reshape->inputs[0], producers);
    if (!transpose || !transpose->domain.empty() || transpose->op_type != "Transpose" || !SwapsLastTwo(*transpose))
      return std::nullopt;
    const std::optional<Dims> m = StaticDims(map), t = StaticDims(transpose->inputs[0]);
    if (!m || !t || m->size() != 4 || t->size() != 3) return std::nullopt;
    if ((*t)[0] != (*m)[0] || (*t)[2] != (*m)[1] || (*t)[1] != (*m)[2] * (*m)[3]) return std::nullopt;
    return transpose->inputs[0];
  }

  // b when Transpose `t` (0 2 1) reads Reshape(FromBlocked(b)) with FromBlocked channels-last,
  // its output [N, C, H, W] reshaped to [N, C, HW] and t writing [N, HW, C].
  std::optional<std::string> BlockedOfTokens(const Node& t, const std::map<std::string, size_t>& producers) const {
    const Node* reshape = ProducerOf(t.inputs[0], producers);
    if (!reshape || !reshape->domain.empty() || reshape->op_type != "Reshape" || reshape->inputs.empty()) return std::nullopt;
    const Node* from = ProducerOf(reshape->inputs[0], producers);
    if (!from || from->domain != kTandemDomain || from->op_type != "FromBlocked" ||
        from->attr_int("channel_block", 0) != kChannelsLast || from->inputs.size() != 1)
      return std::nullopt;
    const std::optional<Dims> m = StaticDims(reshape->inputs[0]), q = StaticDims(t.inputs[0]), u = StaticDims(t.outputs[0]);
    if (!m || !q || !u || m->size() != 4 || q->size() != 3 || u->size() != 3) return std::nullopt;
    if ((*q)[0] != (*m)[0] || (*q)[1] != (*m)[1] || (*q)[2] != (*m)[2] * (*m)[3]) return std::nullopt;
    return from->inputs[0];
  }

  // `n` becomes Reshape(data, dims) (its name and output kept), with the output's value info.
  void MakeReshape(Node& n, const std::string& data, const Dims& dims) {
    const std::string shape = UnusedValueName(graph_, n.outputs[0] + "/shape");
    graph_.initializers[shape] = Tensor::FromVector<int64_t>(std::vector<int64_t>(dims.begin(), dims.end()),
                                                             {static_cast<int64_t>(dims.size())});
    n.op_type = "Reshape";
    n.domain.clear();
    n.inputs = {data, shape};
    n.attributes.clear();
    ValueInfo vi;
    if (const ValueInfo* old = graph_.FindValueInfo(n.outputs[0])) vi = *old;
    vi.name = n.outputs[0];
    vi.shape = Shape::Of(dims);
    if (vi.dtype == DataType::kUndefined) vi.dtype = graph_.ValueType(data);
    graph_.value_info[vi.name] = vi;
  }

  // Removes this provider's Transposes, Reshapes and FromBlockeds that nothing reads.
  void RemoveUnread() {
    for (bool changed = true; changed;) {
      changed = false;
      const ValueReaders readers(graph_);
      std::set<size_t> dead;
      for (size_t i = 0; i < graph_.nodes.size(); ++i) {
        const Node& n = graph_.nodes[i];
        const bool candidate = n.provider == provider_ && n.outputs.size() == 1 &&
                               ((n.domain.empty() && (n.op_type == "Transpose" || n.op_type == "Reshape")) ||
                                (n.domain == kTandemDomain && n.op_type == "FromBlocked"));
        if (candidate && readers.nodes(n.outputs[0]).empty() && !readers.pinned(n.outputs[0])) dead.insert(i);
      }
      if (!dead.empty()) {
        RemoveNodes(graph_, dead);
        changed = true;
      }
    }
  }

  Graph& graph_;
  const std::string provider_;
};

}  // namespace

int ReadTokensAsChannelsLast(Graph& graph, const std::string& provider, int block) {
  if (block != kChannelsLast || graph.HasGradientNodes()) return 0;
  return TokenMaps(graph, provider).Run();
}

}  // namespace tandem::cpu
