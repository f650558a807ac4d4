// Losses as graph fragments: AddLoss appends to a graph the nodes that compute a scalar
// loss from a prediction and a target, so autograd (training/gradient_builder.h)
// differentiates them like the rest of the model.
//   mse             mean/sum of (p - t)^2             ai.tandem MSELoss (fused; t of p's shape)
//   l1              mean/sum of |p - t|               Sub, Relu(d) + Relu(-d), Reduce*
//   cross_entropy   p: logits [N, C, ...], t: int64 class indices [N, ...]
//                   ONNX SoftmaxCrossEntropyLoss (needs ai.onnx opset >= 12)
//   nll             p: log-probabilities [N, C, ...] (a LogSoftmax output), t as above
//                   ONNX NegativeLogLikelihoodLoss (opset >= 12); PyTorch's nll_loss
//   bce_with_logits p: logits, t: probabilities of the same shape
//                   ai.tandem BCEWithLogitsLoss (fused, numerically stable)
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace tandem::training {

enum class LossKind { kMse, kL1, kCrossEntropy, kNll, kBceWithLogits };
enum class Reduction { kMean, kSum };

// "mse" | "l1" | "cross_entropy" | "nll" | "bce_with_logits" (also "ce", "bce").
// Whether the loss takes integer class labels (cross_entropy, nll).
bool TakesClassLabels(LossKind kind);
absl::StatusOr<LossKind> LossFromString(const std::string& name);
std::string LossName(LossKind kind);

// Appends the loss nodes and returns the name of the scalar loss value (a fresh name
// starting with "loss"). `prediction` must be a value of `g`. When `target` names no value
// of `g` it is added as a graph input: int64 for class labels, the prediction's element
// type otherwise (left undefined, i.e. unchecked, when the graph does not know it), shape
// unknown. The loss is not added to
// g.outputs; the caller decides.
absl::StatusOr<std::string> AddLoss(Graph& g, LossKind kind, const std::string& prediction,
                                    const std::string& target, Reduction reduction);

}  // namespace tandem::training
