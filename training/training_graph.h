// Builds the training graph from an inference graph: the forward pass in training mode,
// the loss, the backward pass (AddGradients) and one fused optimizer update per
// parameter — all ordinary nodes of one Graph that a Session runs.
//
// Trainable parameters (float initializers not frozen, and not Dropout ratios or
// BatchNormalization running statistics) become graph inputs; so do the running
// statistics (updated by the forward pass in training mode and returned as graph
// outputs), the parameters' optimizer state tensors, the target, the step counter and
// the learning rate: the trainer owns those buffers and feeds them every step, and the
// update nodes modify them in place. Update nodes come last in node order, after every
// gradient is computed (the runtime executes nodes in graph order; nothing between here
// and the plan reorders them).
//
// Dropout in training mode draws its mask from (seed, step, element index) alone: the
// step input is its counter (a 4th input, see ops/dropout_mask.h) and
// its seed is the node's `seed` attribute or else one derived from TrainingSpec::seed
// and the node's position among the Dropout nodes. A run is therefore reproducible, and
// resuming from a checkpoint (which stores the step) draws the same masks. Its mask
// output is always produced: the gradient reuses it. In data-parallel training a 5th
// input, the rank's first row in the global batch, makes its share draw the mask of those
// rows in the one-process run (the batch is dimension 0 of Dropout's input).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "training/losses.h"
#include "training/optimizer.h"

namespace tandem::training {

struct TrainingSpec {
  LossKind loss = LossKind::kMse;
  Reduction reduction = Reduction::kMean;
  std::string prediction;                    // model output fed to the loss ("" = first)
  std::vector<std::string> freeze;           // exact names or prefixes ending in '*'
  OptimizerSpec optimizer;
  uint64_t seed = 0;                         // Dropout masks, for nodes without a seed attribute
  // The CPU's fusions of the forward pass, before the gradients are built: Gemm +
  // activation chains become ai.tandem DenseChain (optimizer/dense_chain_fusion.h), larger
  // linear layers on a transposed weight one Gemm (optimizer/linear_layer_gemm.h), GELUs
  // spelled out in element-wise nodes one Gelu (optimizer/gelu_fusion.h), attention one
  // FusedAttention (ops/attention_subgraph.h; not under TANDEM_CPU_FUSED_ATTENTION=0),
  // constants folded first; and a chain's MSE
  // loss with its gradient is folded into one node (optimizer/dense_chain_loss_fusion.h).
  // Only the CPU has their kernels (and their gradients').
  bool cpu_fusions = false;
  // Every parameter's optimizer update in one node (the CPU kernels take several
  // parameters per node; the CUDA ones one).
  bool one_update_node = false;
  // Data-parallel training: the gradients are summed across the ranks by AllReduce nodes
  // (training/gradient_all_reduce.h) in buckets of about bucket_bytes, before clipping and
  // the updates; TrainingGraph::grad_scale is then this rank's share of the global batch.
  bool all_reduce = false;
  int64_t bucket_bytes = int64_t{25} << 20;
};

struct TrainingGraph {
  Graph graph;
  std::vector<std::string> data_inputs;      // the model's own inputs
  std::string target;                        // graph input holding the labels/targets
  std::string loss;                          // graph output: scalar loss
  std::vector<std::string> params;           // trainable parameters (graph inputs)
  std::map<std::string, std::vector<std::string>> state;  // param -> optimizer state inputs
  std::string step, lr;                      // scalar inputs: int64 step (1-based), float lr
  std::string grad_scale;                    // with all_reduce: scalar float input, the rank's share
  std::string first_row;                     // with all_reduce: int64 input, its first row in the global batch
  // BatchNormalization running statistics: graph input -> graph output with its update
  // (outputs 1.. of the graph, in this order, after the loss).
  std::vector<std::pair<std::string, std::string>> running_stats;
};

// Names of the trainable parameters of `inference` under `freeze`: its floating-point
// initializers, less the values of Constant nodes (Graph::constants), BatchNormalization
// running statistics and Dropout ratios.
std::vector<std::string> TrainableParameters(const Graph& inference,
                                             const std::vector<std::string>& freeze);

absl::StatusOr<TrainingGraph> BuildTrainingGraph(const Graph& inference, const TrainingSpec& spec);

// The evaluation form of a model (also what export writes): BatchNormalization uses its
// running statistics and Dropout is off, even in models exported in training mode.
Graph InferenceMode(Graph g);

}  // namespace tandem::training
