#include "optimizer/linear_layer_gemm.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/passes.h"
#include "graph/static_shape.h"
#include "graph/value_readers.h"

namespace tandem {
namespace {

// The dims of a float32 graph input or initializer (there before any node runs), when known.
std::optional<Dims> ParameterDims(const Graph& g, const std::string& v) {
  const bool input = std::any_of(g.inputs.begin(), g.inputs.end(), [&](const ValueInfo& in) { return in.name == v; });
  if ((!input && !g.initializers.count(v)) || g.ValueType(v) != DataType::kFloat) return std::nullopt;
  return StaticDims(g, v);
}

Node MakeNode(const std::string& op, const std::string& name, std::vector<std::string> inputs,
              std::vector<std::string> outputs) {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

}  // namespace

int FuseLinearLayersIntoGemm(Graph& graph) {
  if (graph.opset("") < 13) return 0;  // Slice with inputs, Gemm's optional C
  const ValueReaders readers(graph);
  const std::map<std::string, size_t> producer = Producers(graph);
  std::set<std::string> names;  // every value and initializer name: the new ones must be fresh
  for (const ValueInfo& v : graph.inputs) names.insert(v.name);
  for (const auto& [name, t] : graph.initializers) names.insert(name);
  for (const auto& [name, v] : graph.value_info) names.insert(name);
  for (const Node& n : graph.nodes) names.insert(n.outputs.begin(), n.outputs.end());
  std::set<size_t> removed;
  std::map<size_t, std::vector<Node>> replacement;  // at the MatMul's place
  std::set<std::string> transposed;                  // the weights' Transposes' outputs
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& mm = graph.nodes[i];
    if (!mm.domain.empty() || mm.op_type != "MatMul" || mm.inputs.size() != 2) continue;
    auto tp = producer.find(mm.inputs[1]);
    if (tp == producer.end()) continue;
    const Node& tr = graph.nodes[tp->second];
    if (!tr.domain.empty() || tr.op_type != "Transpose" || tr.inputs.size() != 1 ||
        (tr.has_attr("perm") && tr.attr_ints("perm") != std::vector<int64_t>{1, 0}))
      continue;
    const std::string& w = tr.inputs[0];
    const std::optional<Dims> wd = ParameterDims(graph, w);
    if (!wd || wd->size() != 2) continue;
    const int64_t N = (*wd)[0], K = (*wd)[1];
    if (N <= 0 || K <= 0) continue;  // Reshape(A, [-1, 0]) cannot infer its -1
    // The bias: the MatMul's sole reader adding a [N] parameter.
    std::string bias, y = mm.outputs[0];
    int taken_add = -1;
    const int add = readers.Sole(mm.outputs[0]);  // -1 also when the product is a graph output
    if (add >= 0) {
      const Node& a = graph.nodes[static_cast<size_t>(add)];
      if (a.domain.empty() && a.op_type == "Add" && a.inputs.size() == 2) {
        const std::string& other = a.inputs[0] == mm.outputs[0] ? a.inputs[1] : a.inputs[0];
        const std::optional<Dims> bd = ParameterDims(graph, other);
        if (other != mm.outputs[0] && bd && *bd == Dims{N}) {
          bias = other;
          y = a.outputs[0];
          taken_add = add;
        }
      }
    }
    const std::string& x = mm.inputs[0];
    const ValueInfo* xi = graph.FindValueInfo(x);
    const bool matrix = xi && xi->shape.rank_known && xi->shape.dims.size() == 2;
    const std::string base = y + "/linear";
    bool fresh = true;
    for (const char* suffix : {"/rows", "/rows_shape", "/last_dim", "/zero", "/minus_one", "/shape", "/lead",
                               "/out_shape", "/gemm"})
      fresh &= !names.count(base + suffix);
    if (!fresh) continue;
    if (taken_add >= 0) {
      removed.insert(static_cast<size_t>(taken_add));
      graph.value_info.erase(mm.outputs[0]);  // the product is no longer a value
    }
    std::vector<Node> nodes;
    std::vector<std::string> gemm_in = {matrix ? x : base + "/rows", w};
    if (!bias.empty()) gemm_in.push_back(bias);
    if (!matrix) {
      Tensor rows = Tensor::Host(DataType::kInt64, {2});
      rows.data<int64_t>()[0] = -1;
      rows.data<int64_t>()[1] = K;
      graph.initializers[base + "/rows_shape"] = rows;
      graph.initializers[base + "/last_dim"] = Tensor::FromVector<int64_t>({N}, {1});
      graph.initializers[base + "/zero"] = Tensor::FromVector<int64_t>({0}, {1});
      graph.initializers[base + "/minus_one"] = Tensor::FromVector<int64_t>({-1}, {1});
      nodes.push_back(MakeNode("Reshape", base + "/rows", {x, base + "/rows_shape"}, {base + "/rows"}));
      nodes.push_back(MakeNode("Shape", base + "/shape", {x}, {base + "/shape"}));
      nodes.push_back(MakeNode("Slice", base + "/lead", {base + "/shape", base + "/zero", base + "/minus_one"},
                               {base + "/lead"}));
      Node concat = MakeNode("Concat", base + "/out_shape", {base + "/lead", base + "/last_dim"}, {base + "/out_shape"});
      concat.attributes["axis"] = IntAttribute(0);
      nodes.push_back(std::move(concat));
    }
    Node gemm = MakeNode("Gemm", base + "/gemm", gemm_in, {matrix ? y : base + "/gemm"});
    gemm.attributes["transB"] = IntAttribute(1);
    nodes.push_back(std::move(gemm));
    if (!matrix) nodes.push_back(MakeNode("Reshape", base + "/unrows", {base + "/gemm", base + "/out_shape"}, {y}));
    if (xi && xi->shape.rank_known && !xi->shape.dims.empty() && !graph.value_info.count(y)) {
      Shape s = xi->shape;  // A's with the last dim N; what shape inference recorded is kept
      s.dims.back() = Shape::Of({N}).dims[0];
      graph.value_info[y] = ValueInfo{y, DataType::kFloat, s};
    }
    replacement[i] = std::move(nodes);
    transposed.insert(tr.outputs[0]);
    removed.insert(i);
  }
  if (replacement.empty()) return 0;
  std::vector<Node> out;
  out.reserve(graph.nodes.size() + 6 * replacement.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (auto r = replacement.find(i); r != replacement.end())
      for (Node& n : r->second) out.push_back(std::move(n));
    if (!removed.count(i)) out.push_back(std::move(graph.nodes[i]));
  }
  graph.nodes = std::move(out);
  // The weights' Transposes that nothing reads any more.
  const ValueReaders after(graph);
  std::set<size_t> unread;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (!n.outputs.empty() && transposed.count(n.outputs[0]) && after.nodes(n.outputs[0]).empty() &&
        !after.pinned(n.outputs[0]))
      unread.insert(i);
  }
  RemoveNodes(graph, unread);
  return static_cast<int>(replacement.size());
}

}  // namespace tandem
