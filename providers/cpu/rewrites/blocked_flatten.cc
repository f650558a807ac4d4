#include "providers/cpu/rewrites/blocked_flatten.h"

#include <set>
#include <vector>

#include "graph/passes.h"
#include "graph/value_readers.h"
#include "providers/cpu/channel_block.h"

namespace tandem::cpu {
namespace {

bool IsOp(const Node& n, const std::string& provider, const std::string& domain, const std::string& op) {
  return n.provider == provider && n.domain == domain && n.op_type == op;
}

// The k axis of B (0 or 1) when `n` is a dense product of A = its input 0 by a 2-D float
// initializer B, else -1.
int DenseKAxis(const Graph& g, const Node& n, const std::string& provider) {
  const bool gemm = IsOp(n, provider, "", "Gemm") || IsOp(n, provider, kTandemDomain, "FusedGemm");
  const bool matmul = IsOp(n, provider, "", "MatMul") || IsOp(n, provider, kTandemDomain, "FusedMatMul");
  if ((!gemm && !matmul) || n.inputs.size() < 2 || (gemm && n.attr_int("transA", 0) != 0)) return -1;
  auto b = g.initializers.find(n.inputs[1]);
  if (b == g.initializers.end() || b->second.dtype() != DataType::kFloat || b->second.rank() != 2) return -1;
  return gemm && n.attr_int("transB", 0) != 0 ? 1 : 0;
}

// B with its k axis (length C * hw) reordered from plain Flatten order to the blocked one.
Tensor PermutedWeights(const Tensor& b, int k_axis, int64_t C, int64_t hw, int block) {
  const int64_t blk = block == kChannelsLast ? C : block;
  const int64_t k = C * hw, n = b.dim(1 - k_axis);
  std::vector<int64_t> to(k);  // plain k -> blocked k
  for (int64_t c = 0; c < C; ++c)
    for (int64_t s = 0; s < hw; ++s) to[c * hw + s] = (c / blk) * hw * blk + s * blk + c % blk;
  Tensor out = Tensor::Host(DataType::kFloat, b.dims());
  const float* src = b.data<float>();
  float* dst = out.data<float>();
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) {
      if (k_axis == 0) dst[to[kk] * n + j] = src[kk * n + j];
      else dst[j * k + to[kk]] = src[j * k + kk];
    }
  return out;
}

}  // namespace

int FlattenBlockedIntoDense(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  const ValueReaders readers(graph);
  std::set<size_t> removed;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& from = graph.nodes[i];
    if (!IsOp(from, provider, kTandemDomain, "FromBlocked") || from.inputs.size() != 1 || from.outputs.size() != 1)
      continue;
    const std::string& v = from.outputs[0];
    const int fi = readers.Sole(v);
    if (fi < 0) continue;
    Node& flatten = graph.nodes[static_cast<size_t>(fi)];
    if (!IsOp(flatten, provider, "", "Flatten") || flatten.attr_int("axis", 1) != 1 || flatten.outputs.size() != 1)
      continue;
    const int di = readers.Sole(flatten.outputs[0]);
    if (di < 0) continue;
    Node& dense = graph.nodes[static_cast<size_t>(di)];
    const int k_axis = DenseKAxis(graph, dense, provider);
    if (k_axis < 0 || dense.inputs[0] != flatten.outputs[0]) continue;
    const ValueInfo* vi = graph.FindValueInfo(v);
    if (!vi || !vi->shape.rank_known || vi->shape.dims.size() < 3) continue;
    int64_t C = 0, hw = 1;
    bool known = true;
    for (size_t d = 1; d < vi->shape.dims.size(); ++d) {
      known &= vi->shape.dims[d].known();
      if (!known) break;
      if (d == 1) C = vi->shape.dims[d].value;
      else hw *= vi->shape.dims[d].value;
    }
    const Tensor& b = graph.initializers.at(dense.inputs[1]);
    if (!known || C <= 0 || b.dim(k_axis) != C * hw) continue;
    const int block = static_cast<int>(from.attr_int("channel_block", 0));
    if (block != kChannelsLast && (block <= 1 || C % block != 0)) continue;
    Tensor permuted = PermutedWeights(b, k_axis, C, hw, block);
    std::string b_name = dense.inputs[1];
    if (readers.nodes(b_name).size() != 1 || readers.pinned(b_name)) {
      b_name += "#blocked_order";
      dense.inputs[1] = b_name;
    }
    graph.initializers[b_name] = std::move(permuted);
    flatten.inputs[0] = from.inputs[0];
    removed.insert(i);
  }
  if (!removed.empty()) RemoveNodes(graph, removed);
  return static_cast<int>(removed.size());
}

}  // namespace tandem::cpu
