#include "optimizer/onnx_rewrites/matmul_bn_folding.h"

#include <optional>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// The index of the node writing `value` when `reader` alone reads it, else -1.
int SoleProducer(const std::string& value, int reader, const ValueReaders& readers,
                 const std::map<std::string, size_t>& producers) {
  auto p = producers.find(value);
  return p != producers.end() && readers.Sole(value) == reader ? static_cast<int>(p->second) : -1;
}

int Rank(const Graph& graph, const std::string& value) {
  const Shape* s = rewrite::KnownShape(graph, value);
  return s ? static_cast<int>(s->dims.size()) : -1;
}

// Whether `node` is a Flatten at its input's last axis, or a Reshape to rank 2 whose input
// and output end in the same known dim: either way column c of its [rows, N] output holds
// column c of its input.
bool FlattensToColumns(const Graph& graph, const Node& node) {
  const int rank = Rank(graph, node.inputs[0]);
  if (rank < 2) return false;
  if (IsOnnx(node, "Flatten")) return (node.attr_int("axis", 1) + rank) % rank == rank - 1;
  if (!IsOnnx(node, "Reshape") || node.outputs.empty()) return false;
  const Shape* in = rewrite::KnownShape(graph, node.inputs[0]);
  const Shape* out = rewrite::KnownShape(graph, node.outputs[0]);
  return out && out->dims.size() == 2 && out->dims[1].known() && in->dims.back().known() &&
         out->dims[1].value == in->dims.back().value;
}

// Folds the BatchNormalization at `k` when the pattern holds; returns whether it did.
bool FoldAt(Graph& graph, size_t k, const ValueReaders& readers, const std::map<std::string, size_t>& producers) {
  const Node& bn = graph.nodes[k];
  const std::optional<rewrite::ChannelAffine> affine = rewrite::InferenceBatchNorm(graph, bn);
  if (!affine || readers.pinned(bn.outputs[0]) || Rank(graph, bn.inputs[0]) != 2) return false;
  int mm = SoleProducer(bn.inputs[0], static_cast<int>(k), readers, producers);
  if (mm >= 0 && (IsOnnx(graph.nodes[mm], "Flatten") || IsOnnx(graph.nodes[mm], "Reshape"))) {
    const Node& flatten = graph.nodes[mm];
    if (!FlattensToColumns(graph, flatten)) return false;
    // The product's other readers may only be Shape nodes (the export's reshape back).
    const auto p = producers.find(flatten.inputs[0]);
    int others = 0;
    for (size_t r : readers.nodes(flatten.inputs[0]))
      others += static_cast<int>(r) != mm && !IsOnnx(graph.nodes[r], "Shape");
    mm = p == producers.end() || others || readers.pinned(flatten.inputs[0]) ? -1 : static_cast<int>(p->second);
  }
  if (mm < 0 || !IsOnnx(graph.nodes[mm], "MatMul") || graph.nodes[mm].inputs.size() != 2) return false;
  const Node& matmul = graph.nodes[mm];
  const Tensor* w = Constant(graph, matmul.inputs[1]);
  const int64_t n = static_cast<int64_t>(affine->a.size());
  if (!w || w->dtype() != DataType::kFloat || w->rank() != 2 || w->dim(1) != n || matmul.inputs[0] == matmul.inputs[1])
    return false;
  Tensor scaled = Tensor::Host(DataType::kFloat, w->dims());
  for (int64_t r = 0; r < w->dim(0); ++r)
    for (int64_t c = 0; c < n; ++c)
      scaled.data<float>()[r * n + c] = static_cast<float>(w->data<float>()[r * n + c] * affine->a[c]);
  std::vector<float> shift(affine->s.begin(), affine->s.end());
  const std::string base = matmul.name.empty() ? matmul.outputs[0] : matmul.name;
  const std::string w_name = rewrite::FreshName(graph, base + ".bn_weight");
  graph.initializers[w_name] = std::move(scaled);
  const std::string s_name = rewrite::FreshName(graph, base + ".bn_shift");
  graph.initializers[s_name] = Tensor::FromVector<float>(shift, {n});
  const std::string product = matmul.outputs[0];
  const std::string unshifted = rewrite::FreshName(graph, product + ".unshifted");
  if (const ValueInfo* info = graph.FindValueInfo(product)) {
    ValueInfo copy = *info;
    copy.name = unshifted;
    graph.value_info[unshifted] = copy;
  }
  Node add;
  add.name = bn.name.empty() ? base + "+bn" : bn.name;
  add.op_type = "Add";
  add.inputs = {unshifted, s_name};
  add.outputs = {product};
  const std::string bn_in = bn.inputs[0], bn_out = bn.outputs[0];
  graph.nodes[mm].inputs[1] = w_name;
  graph.nodes[mm].outputs[0] = unshifted;
  rewrite::RedirectReads(graph, bn_out, bn_in);
  rewrite::RemoveNodes(graph, {k});
  graph.nodes.insert(graph.nodes.begin() + mm + 1, std::move(add));  // mm < k: its index holds
  return true;
}

}  // namespace

int FoldMatMulBatchNorm(Graph& graph) {
  int folded = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const ValueReaders readers(graph);
    const auto producers = Producers(graph);
    for (size_t k = 0; k < graph.nodes.size() && !changed; ++k) changed = FoldAt(graph, k, readers, producers);
    folded += changed;
  }
  return folded;
}

}  // namespace tandem
