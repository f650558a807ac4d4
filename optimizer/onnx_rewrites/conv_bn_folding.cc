#include "optimizer/onnx_rewrites/conv_bn_folding.h"

#include <cmath>
#include <vector>

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// Folds batch norm `bn` into `conv`; false (graph unchanged) when the pattern does not hold.
bool Fold(Graph& graph, Node& conv, const Node& bn) {
  const Tensor* w = Constant(graph, conv.inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() < 3) return false;
  const int64_t channels = w->dim(0);
  const Tensor* b = conv.has_input(2) ? Constant(graph, conv.inputs[2]) : nullptr;
  if (conv.has_input(2) && !(b && b->dtype() == DataType::kFloat && b->numel() == channels)) return false;
  const std::optional<rewrite::ChannelAffine> affine = rewrite::InferenceBatchNorm(graph, bn);
  if (!affine || static_cast<int64_t>(affine->a.size()) != channels) return false;
  std::vector<float> new_b(channels);
  for (int64_t c = 0; c < channels; ++c)
    new_b[c] = static_cast<float>((b ? b->data<float>()[c] : 0.0) * affine->a[c] + affine->s[c]);
  rewrite::SetScaledConvWeights(graph, conv, *w, affine->a, &new_b, conv.name.empty() ? bn.outputs[0] : conv.name,
                                "folded");
  return true;
}

}  // namespace

int FoldConvBatchNorm(Graph& graph) {
  auto inference_batch_norm = [](const Node& bn) {
    bool extra_outputs = false;
    for (size_t o = 1; o < bn.outputs.size(); ++o) extra_outputs |= bn.has_output(o);
    return IsOnnx(bn, "BatchNormalization") && bn.attr_int("training_mode", 0) == 0 && !extra_outputs
               ? std::vector<int>{0}
               : std::vector<int>{};
  };
  return rewrite::FoldIntoProducers(graph, inference_batch_norm, [](Graph& g, Node& conv, const Node& bn, int) {
    return IsOnnx(conv, "Conv") && conv.has_input(1) && Fold(g, conv, bn);
  });
}

}  // namespace tandem
