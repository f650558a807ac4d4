#include "optimizer/onnx_rewrites/conv_scale_folding.h"

#include <vector>

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {
namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// Folds the constant `scale_name` into `conv`; false (graph unchanged) when the pattern does not hold.
bool Absorb(Graph& graph, Node& conv, const std::string& scale_name) {
  const Tensor* w = conv.has_input(1) ? Constant(graph, conv.inputs[1]) : nullptr;
  if (!w || w->dtype() != DataType::kFloat || w->rank() < 3 || w->dim(0) == 0) return false;
  const int64_t channels = w->dim(0);
  const Tensor* s = Constant(graph, scale_name);
  const bool one = s && s->dtype() == DataType::kFloat && s->numel() == 1 && s->rank() <= w->rank();
  if (!one && !rewrite::IsPerChannelConstant(s, channels, w->rank())) return false;
  const Tensor* b = conv.has_input(2) ? Constant(graph, conv.inputs[2]) : nullptr;
  if (conv.has_input(2) && !(b && b->dtype() == DataType::kFloat && b->numel() == channels)) return false;
  std::vector<double> factor(channels);
  std::vector<float> new_b(b ? channels : 0);
  for (int64_t m = 0; m < channels; ++m) {
    factor[m] = s->data<float>()[one ? 0 : m];
    if (b) new_b[m] = static_cast<float>(b->data<float>()[m] * factor[m]);
  }
  rewrite::SetScaledConvWeights(graph, conv, *w, factor, b ? &new_b : nullptr,
                                conv.name.empty() ? conv.outputs[0] : conv.name, "scaled");
  return true;
}

}  // namespace

int FoldConvScales(Graph& graph) {
  return rewrite::FoldIntoProducers(
      graph,
      [](const Node& n) {
        return IsOnnx(n, "Mul") && n.inputs.size() == 2 ? std::vector<int>{0, 1} : std::vector<int>{};
      },
      [](Graph& g, Node& producer, const Node& mul, int slot) {
        return IsOnnx(producer, "Conv") && Absorb(g, producer, mul.inputs[1 - slot]);
      });
}

}  // namespace tandem
