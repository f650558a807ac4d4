#include "optimizer/onnx_rewrites/conv_bn_folding.h"

#include <cmath>
#include <vector>

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// The float32 initializer named `value` with `numel` elements, or null.
const Tensor* FloatConstant(const Graph& graph, const std::string& value, int64_t numel) {
  const Tensor* t = Constant(graph, value);
  return t && t->dtype() == DataType::kFloat && t->numel() == numel ? t : nullptr;
}

// Folds batch norm `bn` into `conv`; false (graph unchanged) when the pattern does not hold.
bool Fold(Graph& graph, Node& conv, const Node& bn) {
  const Tensor* w = Constant(graph, conv.inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->rank() < 3) return false;
  const int64_t channels = w->dim(0);
  const Tensor* b = conv.has_input(2) ? FloatConstant(graph, conv.inputs[2], channels) : nullptr;
  if (conv.has_input(2) && !b) return false;
  const Tensor* params[4];
  for (int i = 0; i < 4; ++i)
    if (!bn.has_input(i + 1) || !(params[i] = FloatConstant(graph, bn.inputs[i + 1], channels)))
      return false;
  const float* scale = params[0]->data<float>();
  const float* bias = params[1]->data<float>();
  const float* mean = params[2]->data<float>();
  const float* var = params[3]->data<float>();
  const double eps = bn.attr_float("epsilon", 1e-5f);
  std::vector<double> s(channels);
  std::vector<float> new_b(channels);
  for (int64_t c = 0; c < channels; ++c) {
    s[c] = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
    const double b0 = b ? b->data<float>()[c] : 0.0;
    new_b[c] = static_cast<float>((b0 - mean[c]) * s[c] + bias[c]);
  }
  rewrite::SetScaledConvWeights(graph, conv, *w, s, &new_b, conv.name.empty() ? bn.outputs[0] : conv.name, "folded");
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
