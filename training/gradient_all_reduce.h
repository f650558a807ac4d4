// The data-parallel part of the training graph (docs/DISTRIBUTED.md): every parameter's
// gradient goes through an ai.tandem AllReduce node before the optimizer sees it, so each
// rank updates its copy of the parameters with the same sum over all ranks.
//
// Gradients are grouped in buckets of about `bucket_bytes` (PyTorch DDP's 25 MB) in the
// order the backward pass produces them (the last layers first), and each bucket's node is
// placed right after the last of its gradients is computed, so the partitioner, the plan
// and the profiler see the communication where it happens. Every node also reads the scalar
// float input `scale`: each rank multiplies its gradients by its share of the global batch
// (rows here / rows in all), which makes the sum the gradient of the global batch's mean
// loss even when the shares are uneven.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tandem::training {

// Adds the AllReduce nodes to `g` for `grads` (the gradient value of each parameter in
// `params`, whose initializer or input gives its size) and the graph input `scale`.
// Returns the reduced gradients' names, in the order of `grads`.
std::vector<std::string> AddGradientAllReduce(Graph& g, const std::vector<std::string>& params,
                                              const std::vector<std::string>& grads, const std::string& scale,
                                              int64_t bucket_bytes);

}  // namespace tandem::training
