// The data-parallel part of the training graph (docs/DISTRIBUTED.md): every parameter's
// gradient is summed over the ranks (ai.tandem AllReduceStart / AllReduceWait) before the
// optimizer sees it, so each rank updates its copy of the parameters with the same sum.
//
// Gradients are grouped in buckets of about `bucket_bytes` (PyTorch DDP's 25 MB) in the
// order the backward pass produces them (the last layers first). A bucket's AllReduceStart
// node sits right after the last of its gradients is computed and hands the bucket to the
// communicator, which sums it while the backward pass goes on; its AllReduceWait node,
// after the whole backward pass, takes the sum (providers/cpu/kernels/training/all_reduce.cc). So
// the partitioner, the plan and the profiler see the communication where it happens.
// Start also reads the scalar float input `scale`: each rank multiplies its gradients by
// its share of the global batch (rows here / rows in all), which makes the sum the
// gradient of the global batch's mean loss even when the shares are uneven.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tandem::training {

// Adds the all-reduce nodes to `g` for `grads` (the gradient value of each parameter in
// `params`, whose initializer or input gives its size) and the graph input `scale`.
// Returns the reduced gradients' names, in the order of `grads`.
std::vector<std::string> AddGradientAllReduce(Graph& g, const std::vector<std::string>& params,
                                              const std::vector<std::string>& grads, const std::string& scale,
                                              int64_t bucket_bytes);

}  // namespace tandem::training
