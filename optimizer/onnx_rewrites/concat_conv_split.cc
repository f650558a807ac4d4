#include "optimizer/onnx_rewrites/concat_conv_split.h"

#include <cstring>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;
using rewrite::KnownShape;

// The producer of `value` when it is a node of `op` whose only reader is `reader` and
// whose other outputs are unused; else -1.
int SoleProducer(const Graph& graph, const std::map<std::string, size_t>& producers,
                 const ValueReaders& readers, const std::string& value, const char* op, size_t reader) {
  auto p = producers.find(value);
  if (p == producers.end() || readers.Sole(value) != static_cast<int>(reader)) return -1;
  const Node& n = graph.nodes[p->second];
  if (!IsOnnx(n, op)) return -1;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.has_output(i)) return -1;
  return static_cast<int>(p->second);
}

// Static channel counts of the Concat's inputs, when it joins channels of rank-`rank`
// values; empty otherwise.
std::vector<int64_t> ChannelCounts(const Graph& graph, const Node& concat, int rank) {
  const int64_t axis = concat.attr_int("axis", 0);
  if (axis != 1 && axis != 1 - rank) return {};
  std::vector<int64_t> counts;
  for (const std::string& in : concat.inputs) {
    const Shape* s = KnownShape(graph, in);
    if (in.empty() || !s || static_cast<int>(s->dims.size()) != rank || !s->dims[1].known()) return {};
    counts.push_back(s->dims[1].value);
  }
  return counts;
}

// W[:, begin:begin+count] of a float [M, C, k...] weight, as a new tensor.
Tensor InputChannels(const Tensor& w, int64_t begin, int64_t count) {
  Dims dims = w.dims();
  const int64_t inner = w.numel() / (dims[0] * dims[1]);  // the kernel's spatial size
  dims[1] = count;
  Tensor part = Tensor::Host(DataType::kFloat, dims);
  for (int64_t m = 0; m < dims[0]; ++m)
    std::memcpy(part.data<float>() + m * count * inner, w.data<float>() + (m * w.dim(1) + begin) * inner,
                static_cast<size_t>(count * inner) * sizeof(float));
  return part;
}

// `like` renamed `name`, with its channel dimension set to `channels` when given.
ValueInfo Like(const ValueInfo& like, const std::string& name, int64_t channels = -1) {
  ValueInfo v = like;
  v.name = name;
  if (channels >= 0) v.shape.dims[1] = Dim{channels, ""};
  return v;
}

// Elements per sample (the dimensions after the batch) of a static shape, or -1.
int64_t PerSample(const Shape* s) {
  if (!s || !s->rank_known || s->dims.size() < 2) return -1;
  int64_t n = 1;
  for (size_t i = 1; i < s->dims.size(); ++i) {
    if (!s->dims[i].known()) return -1;
    n *= s->dims[i].value;
  }
  return n;
}

struct Match {
  size_t conv;
  int pool = -1;  // the MaxPool between the Concat and the Conv, if any
  size_t concat;
  std::vector<int64_t> channels;
};

// Whether node `k` is a Conv the rewrite applies to, and what it reads.
bool Matches(const Graph& graph, const std::map<std::string, size_t>& producers, const ValueReaders& readers,
             size_t k, Match& match) {
  const Node& conv = graph.nodes[k];
  if (!IsOnnx(conv, "Conv") || conv.attr_int("group", 1) != 1 || !conv.has_input(0) || !conv.has_input(1) ||
      !conv.has_output(0))
    return false;
  const Tensor* w = Constant(graph, conv.inputs[1]);
  const int64_t out_elements = PerSample(KnownShape(graph, conv.outputs[0]));
  if (!w || w->dtype() != DataType::kFloat || w->rank() < 3 || out_elements < 0) return false;
  match.conv = k;
  std::string x = conv.inputs[0];
  match.pool = SoleProducer(graph, producers, readers, x, "MaxPool", k);
  if (match.pool > static_cast<int>(k)) return false;  // (node order is topological)
  if (match.pool >= 0) x = graph.nodes[match.pool].inputs[0];
  const int concat = SoleProducer(graph, producers, readers, x, "Concat",
                                  match.pool >= 0 ? static_cast<size_t>(match.pool) : k);
  const int64_t joined_elements = concat >= 0 ? PerSample(KnownShape(graph, x)) : -1;
  if (joined_elements < 0 || graph.nodes[concat].inputs.size() < 2 ||
      concat > static_cast<int>(k))
    return false;
  match.concat = static_cast<size_t>(concat);
  match.channels = ChannelCounts(graph, graph.nodes[concat], w->rank());
  int64_t total = 0;
  for (int64_t c : match.channels) total += c;
  if (match.channels.empty() || total != w->dim(1)) return false;
  if (match.pool >= 0) {
    if (PerSample(KnownShape(graph, graph.nodes[match.pool].outputs[0])) < 0) return false;
  }
  return out_elements < joined_elements;
}

// Replaces the match's nodes by the per-part nodes; returns them in order.
std::vector<Node> SplitNodes(Graph& graph, const Match& match) {
  const Node conv = graph.nodes[match.conv];
  const Node& concat = graph.nodes[match.concat];
  const Tensor w = *Constant(graph, conv.inputs[1]);
  const ValueInfo out_info = *graph.FindValueInfo(conv.outputs[0]);
  std::vector<Node> nodes;
  std::string sum;
  int64_t begin = 0;
  for (size_t j = 0; j < match.channels.size(); ++j) {
    const std::string tag = "/part" + std::to_string(j);
    std::string x = concat.inputs[j];
    if (match.pool >= 0) {
      Node pool = graph.nodes[match.pool];
      pool.name += tag;
      pool.inputs = {x};
      x = rewrite::FreshName(graph, pool.outputs[0] + tag);
      pool.outputs = {x};
      graph.value_info[x] = Like(*graph.FindValueInfo(graph.nodes[match.pool].outputs[0]), x, match.channels[j]);
      nodes.push_back(pool);
    }
    Node part = conv;
    part.name += tag;
    const std::string weights = rewrite::FreshName(graph, conv.inputs[1] + tag);
    graph.initializers[weights] = InputChannels(w, begin, match.channels[j]);
    begin += match.channels[j];
    part.inputs = {x, weights};
    if (j == 0 && conv.has_input(2)) part.inputs.push_back(conv.inputs[2]);
    const bool last = j + 1 == match.channels.size();
    const std::string y = rewrite::FreshName(graph, conv.outputs[0] + tag);
    part.outputs = {y};
    graph.value_info[y] = Like(out_info, y);
    nodes.push_back(part);
    if (j == 0) {
      sum = y;
      continue;
    }
    Node add;
    add.name = conv.name + "/sum" + std::to_string(j);
    add.op_type = "Add";
    add.inputs = {y, sum};
    sum = last ? conv.outputs[0] : rewrite::FreshName(graph, conv.outputs[0] + "/sum" + std::to_string(j));
    if (!last) graph.value_info[sum] = Like(out_info, sum);
    add.outputs = {sum};
    nodes.push_back(add);
  }
  return nodes;
}

}  // namespace

int SplitConcatIntoConvs(Graph& graph) {
  if (graph.HasGradientNodes()) return 0;
  int removed = 0;
  std::set<std::string> split_weights;
  for (bool changed = true; changed;) {
    changed = false;
    const ValueReaders readers(graph);
    const auto producers = Producers(graph);
    for (size_t k = 0; k < graph.nodes.size() && !changed; ++k) {
      Match match;
      if (!Matches(graph, producers, readers, k, match)) continue;
      split_weights.insert(graph.nodes[k].inputs[1]);
      std::vector<Node> parts = SplitNodes(graph, match);
      // The parts take the Conv's place (after everything they read); the Concat and the
      // pool, both before it, go.
      graph.value_info.erase(graph.nodes[match.concat].outputs[0]);
      if (match.pool >= 0) graph.value_info.erase(graph.nodes[match.pool].outputs[0]);
      graph.nodes.erase(graph.nodes.begin() + k);
      graph.nodes.insert(graph.nodes.begin() + k, parts.begin(), parts.end());
      std::set<size_t> gone = {match.concat};
      if (match.pool >= 0) gone.insert(static_cast<size_t>(match.pool));
      rewrite::RemoveNodes(graph, gone);
      ++removed;
      changed = true;
    }
  }
  if (removed == 0) return 0;
  const ValueReaders readers(graph);  // unsplit weights nothing else reads go
  for (const std::string& w : split_weights)
    if (readers.nodes(w).empty() && !readers.pinned(w)) graph.initializers.erase(w);
  return removed;
}

}  // namespace tandem
