#include "providers/cpu/rewrites/integer_matmul_to_float.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "graph/passes.h"
#include "graph/static_shape.h"
#include "graph/value_readers.h"

namespace tandem::cpu {
namespace {

// The node alone reading `value` when it is `op` (standard domain) on `provider` with one output.
const Node* SoleReader(const Graph& g, const ValueReaders& readers, const std::string& value, const char* op,
                       const std::string& provider, size_t* index) {
  const int k = readers.Sole(value);
  if (k < 0) return nullptr;
  const Node& n = g.nodes[static_cast<size_t>(k)];
  if (n.provider != provider || !n.domain.empty() || n.op_type != op || n.outputs.size() != 1) return nullptr;
  *index = static_cast<size_t>(k);
  return &n;
}

// The dims of a float value when they are known without running the graph: recorded by shape
// inference, an initializer's, DynamicQuantizeLinear's scale (one value), or a Mul of two
// such with at most one dim each (quantize_dynamic's product of the two scales; exports
// whose shapes inference left unrecorded still show these).
std::optional<Dims> ScaleDims(const Graph& g, const std::map<std::string, size_t>& producers, const std::string& v,
                              int depth = 0) {
  if (std::optional<Dims> recorded = StaticDims(g, v)) return recorded;
  auto it = producers.find(v);
  if (it == producers.end() || depth > 2) return std::nullopt;
  const Node& n = g.nodes[it->second];
  if (!n.domain.empty()) return std::nullopt;
  if (n.op_type == "DynamicQuantizeLinear" && n.outputs.size() > 1 && n.outputs[1] == v) return Dims{};
  if (n.op_type != "Mul" || n.inputs.size() != 2) return std::nullopt;
  const auto a = ScaleDims(g, producers, n.inputs[0], depth + 1), b = ScaleDims(g, producers, n.inputs[1], depth + 1);
  if (!a || !b || a->size() > 1 || b->size() > 1) return std::nullopt;
  const int64_t na = a->empty() ? 1 : (*a)[0], nb = b->empty() ? 1 : (*b)[0];
  if (na != nb && na != 1 && nb != 1) return std::nullopt;
  return a->empty() && b->empty() ? Dims{} : Dims{std::max(na, nb)};
}

// Whether `scale` is a float of one value, or of N values along the last axis (a Mul by it
// then broadcasts like a per-column factor and keeps Y's shape).
bool ColumnScale(const Graph& g, const std::map<std::string, size_t>& producers, const std::string& scale,
                 int64_t n) {
  if (g.ValueType(scale) != DataType::kFloat && !producers.count(scale)) return false;
  const std::optional<Dims> dims = ScaleDims(g, producers, scale);
  if (!dims || dims->size() > 1) return false;  // a rank above 1 could raise Y's rank
  return dims->empty() || (*dims)[0] == 1 || (*dims)[0] == n;
}

}  // namespace

int FuseMatMulIntegerToFloat(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  const ValueReaders readers(graph);
  const std::map<std::string, size_t> producers = Producers(graph);
  std::set<size_t> folded;  // what goes: the MatMulIntegers and the folded nodes but the last of each
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (folded.count(i)) continue;
    const Node& mm = graph.nodes[i];
    if (mm.provider != provider || !mm.domain.empty() || mm.op_type != "MatMulInteger" || mm.inputs.size() < 2 ||
        mm.inputs.size() > 4 || mm.outputs.size() != 1)
      continue;
    auto b = graph.initializers.find(mm.inputs[1]);
    if (b == graph.initializers.end() || b->second.rank() != 2) continue;
    const int64_t n = b->second.dim(1);
    size_t cast_at = 0, mul_at = 0, add_at = 0;
    const Node* cast = SoleReader(graph, readers, mm.outputs[0], "Cast", provider, &cast_at);
    if (!cast || cast->attr_int("to", 0) != static_cast<int64_t>(DataType::kFloat)) continue;
    const Node* mul = SoleReader(graph, readers, cast->outputs[0], "Mul", provider, &mul_at);
    if (!mul || mul->inputs.size() != 2) continue;
    const std::string& scale = mul->inputs[0] == cast->outputs[0] ? mul->inputs[1] : mul->inputs[0];
    if (scale == cast->outputs[0] || !ColumnScale(graph, producers, scale, n)) continue;
    std::string bias, y = mul->outputs[0];
    size_t last = mul_at;  // the fused node takes the last folded node's place: the scale is made by then
    if (const Node* add = SoleReader(graph, readers, y, "Add", provider, &add_at); add && add->inputs.size() == 2) {
      const std::string& other = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
      auto c = graph.initializers.find(other);
      if (other != y && c != graph.initializers.end() && c->second.dtype() == DataType::kFloat &&
          c->second.dims() == Dims{n}) {
        bias = other;
        y = add->outputs[0];
        last = add_at;
      }
    }
    for (size_t k : {i, cast_at, mul_at, add_at})
      if (k != last && (k != add_at || !bias.empty())) folded.insert(k);
    std::vector<std::string> inputs = {mm.inputs[0], mm.inputs[1], scale,
                                       mm.inputs.size() > 2 ? mm.inputs[2] : std::string(),
                                       mm.inputs.size() > 3 ? mm.inputs[3] : std::string()};
    if (!bias.empty()) inputs.push_back(bias);
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    Node fused = mm;
    fused.domain = kTandemDomain;
    fused.op_type = "MatMulIntegerToFloat";
    fused.inputs = std::move(inputs);
    fused.outputs = {y};
    fused.name += "+to_float";
    graph.nodes[last] = std::move(fused);
  }
  if (folded.empty()) return 0;
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  RemoveNodes(graph, folded);
  return static_cast<int>(folded.size());  // one per Cast, Mul and Add: each fusion's last became it
}

}  // namespace tandem::cpu
