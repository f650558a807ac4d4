#include "optimizer/onnx_rewrites/transpose_optimization.h"

#include <numeric>
#include <set>

#include "graph/passes.h"
#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"
#include "optimizer/onnx_rewrites/transpose_pushing.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

bool IsTranspose(const Node& n) { return IsOnnx(n, "Transpose") && n.has_input(0) && n.has_output(0); }

// Rule 1: the Transpose at `k` reading another Transpose reads that one's input instead.
bool ComposeWithProducer(Graph& graph, size_t k, const std::map<std::string, size_t>& producers) {
  Node& outer = graph.nodes[k];
  auto p = producers.find(outer.inputs[0]);
  if (p == producers.end() || !IsTranspose(graph.nodes[p->second])) return false;
  const Node& inner = graph.nodes[p->second];
  const std::vector<int64_t> p1 = rewrite::TransposePerm(graph, inner), p2 = rewrite::TransposePerm(graph, outer);
  if (p1.empty() || p1.size() != p2.size()) return false;
  std::vector<int64_t> q(p2.size());
  for (size_t i = 0; i < q.size(); ++i) q[i] = p1[p2[i]];
  outer.inputs[0] = inner.inputs[0];
  if (rewrite::IsIdentityPerm(q)) {
    outer.op_type = "Identity";
    outer.attributes.clear();
  } else {
    outer.attributes["perm"] = IntsAttribute(q);
  }
  return true;
}

// Where each element of x (flattened past dim 0) sits in Transpose(x, perm) flattened the
// same way: result[i] = j.
std::vector<int64_t> FlattenedPositions(const Dims& x_dims, const std::vector<int64_t>& perm) {
  const int rank = static_cast<int>(x_dims.size());
  Dims t_dims(rank);
  for (int d = 0; d < rank; ++d) t_dims[d] = x_dims[perm[d]];
  Dims t_strides(rank, 1);
  for (int d = rank - 2; d >= 1; --d) t_strides[d] = t_strides[d + 1] * t_dims[d + 1];
  int64_t inner = 1;
  for (int d = 1; d < rank; ++d) inner *= x_dims[d];
  std::vector<int64_t> j_of(inner);
  std::vector<int64_t> index(rank, 0);  // multi-index into x, dims 1..rank-1
  for (int64_t i = 0; i < inner; ++i) {
    int64_t j = 0;
    for (int d = 1; d < rank; ++d) j += index[perm[d]] * t_strides[d];
    j_of[i] = j;
    for (int d = rank - 1; d >= 1 && ++index[d] == x_dims[d]; --d) index[d] = 0;
  }
  return j_of;
}

// Rule 3. Returns whether the Transpose at `k` was folded into the weights after it.
bool FoldIntoFlattenedWeights(Graph& graph, size_t k, const ValueReaders& readers) {
  const Node& t = graph.nodes[k];
  const std::vector<int64_t> perm = rewrite::TransposePerm(graph, t);
  const Shape* x_shape = rewrite::KnownShape(graph, t.inputs[0]);
  if (perm.size() < 3 || perm[0] != 0 || !x_shape || x_shape->dims.size() != perm.size())
    return false;
  Dims x_dims(perm.size(), 0);
  int64_t inner = 1;
  for (size_t d = 1; d < perm.size(); ++d) {
    if (!x_shape->dims[d].known()) return false;
    inner *= x_dims[d] = x_shape->dims[d].value;
  }
  const int r_index = readers.Sole(t.outputs[0]);
  if (r_index < 0) return false;
  const Node& reshape = graph.nodes[r_index];
  if (!IsOnnx(reshape, "Reshape") || reshape.inputs.size() < 2 || reshape.inputs[0] != t.outputs[0] ||
      reshape.attr_int("allowzero", 0) != 0 || readers.pinned(reshape.outputs[0]))
    return false;
  const Tensor* target = Constant(graph, reshape.inputs[1]);
  if (!target || target->dtype() != DataType::kInt64 || target->numel() != 2) return false;
  const int64_t d0 = target->data<int64_t>()[0], d1 = target->data<int64_t>()[1];
  const bool batch_kept = d0 == 0 || (x_shape->dims[0].known() && d0 == x_shape->dims[0].value) ||
                          (d0 == -1 && d1 == inner);
  if (!batch_kept || !(d1 == inner || (d1 == -1 && d0 != -1))) return false;
  const auto& gemms = readers.nodes(reshape.outputs[0]);
  if (gemms.empty()) return false;
  for (size_t g : gemms) {
    const Node& n = graph.nodes[g];
    const bool matmul = IsOnnx(n, "MatMul"), gemm = IsOnnx(n, "Gemm");
    if (!(matmul || gemm) || n.inputs.size() < 2 || n.inputs[0] != reshape.outputs[0] ||
        n.inputs[1] == reshape.outputs[0] || (gemm && n.attr_int("transA", 0) != 0))
      return false;
    const Tensor* w = Constant(graph, n.inputs[1]);
    const bool trans_b = gemm && n.attr_int("transB", 0) != 0;
    if (!w || w->rank() != 2 || w->dim(trans_b ? 1 : 0) != inner) return false;
    if (w->dtype() != DataType::kFloat) return false;
  }
  const std::vector<int64_t> j_of = FlattenedPositions(x_dims, perm);
  for (size_t g : gemms) {
    Node& n = graph.nodes[g];
    const Tensor& w = *Constant(graph, n.inputs[1]);
    const bool trans_b = IsOnnx(n, "Gemm") && n.attr_int("transB", 0) != 0;
    Tensor permuted = Tensor::Host(DataType::kFloat, w.dims());
    const float* src = w.data<float>();
    float* dst = permuted.data<float>();
    const int64_t cols = w.dim(1);
    for (int64_t i = 0; i < inner; ++i) {
      if (trans_b) {
        for (int64_t r = 0; r < w.dim(0); ++r) dst[r * cols + i] = src[r * cols + j_of[i]];
      } else {
        std::copy(src + j_of[i] * cols, src + (j_of[i] + 1) * cols, dst + i * cols);
      }
    }
    const std::string name = rewrite::FreshName(graph, n.inputs[1] + ".channels_first");
    graph.initializers[name] = std::move(permuted);
    n.inputs[1] = name;
  }
  graph.nodes[r_index].inputs[0] = t.inputs[0];
  return true;
}

// Rules 1 and 3 until nothing changes; returns the rewrites made.
int ComposeAndFold(Graph& graph) {
  int rewrites = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const ValueReaders readers(graph);
    const auto producers = Producers(graph);
    for (size_t k = 0; k < graph.nodes.size() && !changed; ++k) {
      if (!IsTranspose(graph.nodes[k])) continue;
      changed = ComposeWithProducer(graph, k, producers) || FoldIntoFlattenedWeights(graph, k, readers);
    }
    rewrites += changed;
  }
  return rewrites;
}

int CountTransposes(const Graph& graph) {
  int count = 0;
  for (const Node& n : graph.nodes) count += IsOnnx(n, "Transpose");
  return count;
}

}  // namespace

int OptimizeTransposes(Graph& graph) {
  Graph pushed = graph;
  const int moves = PushTransposesDown(pushed);
  int rewrites = ComposeAndFold(graph);
  EliminateDeadCode(graph);
  if (moves == 0) return rewrites;
  const int pushed_rewrites = ComposeAndFold(pushed);
  EliminateDeadCode(pushed);
  if (CountTransposes(pushed) >= CountTransposes(graph)) return rewrites;
  graph = std::move(pushed);
  return moves + pushed_rewrites;
}

}  // namespace tandem
