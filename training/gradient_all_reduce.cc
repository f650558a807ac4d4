#include "training/gradient_all_reduce.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tandem::training {

std::vector<std::string> AddGradientAllReduce(Graph& g, const std::vector<std::string>& params,
                                              const std::vector<std::string>& grads, const std::string& scale,
                                              int64_t bucket_bytes) {
  g.inputs.push_back(ValueInfo{scale, DataType::kFloat, Shape::Of({})});
  // Where each gradient is computed (-1: before every node).
  std::map<std::string, int64_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& out : g.nodes[i].outputs) producer[out] = static_cast<int64_t>(i);
  auto made_at = [&](size_t k) {
    auto it = producer.find(grads[k]);
    return it == producer.end() ? int64_t{-1} : it->second;
  };
  std::vector<size_t> order(grads.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return made_at(a) < made_at(b); });

  // Buckets of gradient indices, in the order their gradients are computed.
  std::vector<std::vector<size_t>> buckets(1);
  int64_t bytes = 0;
  for (size_t k : order) {
    buckets.back().push_back(k);
    const ValueInfo* vi = g.FindValueInfo(params[k]);  // parameters are inputs of known shape
    bytes += vi && vi->shape.fully_known() ? NumElements(vi->shape.ToDims()) * 4 : 0;
    if (bytes >= bucket_bytes) {
      buckets.emplace_back();
      bytes = 0;
    }
  }
  if (buckets.back().empty()) buckets.pop_back();

  std::vector<std::string> reduced(grads.size());
  std::map<int64_t, std::vector<Node>> after;  // node index -> the Start nodes placed after it
  std::vector<Node> waits;                     // after the whole backward pass
  for (size_t b = 0; b < buckets.size(); ++b) {
    const std::string name = "train/all_reduce/" + std::to_string(b);
    Node start, wait;
    start.op_type = "AllReduceStart";
    wait.op_type = "AllReduceWait";
    start.domain = wait.domain = kTandemDomain;
    start.name = name + "/start";
    wait.name = name + "/wait";
    start.outputs = {name + "/packed"};
    wait.inputs = {name + "/packed"};
    int64_t last = -1;
    for (size_t k : buckets[b]) {
      start.inputs.push_back(grads[k]);
      wait.inputs.push_back(grads[k]);
      reduced[k] = grads[k] + "/all_reduced";
      wait.outputs.push_back(reduced[k]);
      last = std::max(last, made_at(k));
    }
    start.inputs.push_back(scale);
    after[last].push_back(std::move(start));
    waits.push_back(std::move(wait));
  }
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size() + 2 * buckets.size());
  auto place = [&](int64_t at) {
    auto it = after.find(at);
    if (it != after.end())
      for (Node& n : it->second) nodes.push_back(std::move(n));
  };
  place(-1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    nodes.push_back(std::move(g.nodes[i]));
    place(static_cast<int64_t>(i));
  }
  for (Node& w : waits) nodes.push_back(std::move(w));
  g.nodes = std::move(nodes);
  return reduced;
}

}  // namespace tandem::training
