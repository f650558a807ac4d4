#include "optimizer/onnx_rewrites/conv_scale_folding.h"

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {
namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// Folds the constant `scale_name` into `conv`; false (graph unchanged) when the pattern does not hold.
bool Absorb(Graph& graph, Node& conv, const std::string& scale_name) {
  const Tensor* w = conv.has_input(1) ? Constant(graph, conv.inputs[1]) : nullptr;
  if (!w || w->dtype() != DataType::kFloat || w->rank() < 3 || w->dim(0) == 0) return false;
  const int64_t channels = w->dim(0), per_channel = w->numel() / channels;
  const Tensor* s = Constant(graph, scale_name);
  const bool one = s && s->dtype() == DataType::kFloat && s->numel() == 1 && s->rank() <= w->rank();
  if (!one && !rewrite::IsPerChannelConstant(s, channels, w->rank())) return false;
  const Tensor* b = conv.has_input(2) ? Constant(graph, conv.inputs[2]) : nullptr;
  if (conv.has_input(2) && !(b && b->dtype() == DataType::kFloat && b->numel() == channels)) return false;
  Tensor new_w = Tensor::Host(DataType::kFloat, w->dims());
  Tensor new_b = Tensor::Host(DataType::kFloat, {channels});
  for (int64_t m = 0; m < channels; ++m) {
    const double factor = s->data<float>()[one ? 0 : m];
    const float* src = w->data<float>() + m * per_channel;
    float* dst = new_w.data<float>() + m * per_channel;
    for (int64_t k = 0; k < per_channel; ++k) dst[k] = static_cast<float>(src[k] * factor);
    new_b.data<float>()[m] = b ? static_cast<float>(b->data<float>()[m] * factor) : 0.f;
  }
  const std::string base = conv.name.empty() ? conv.outputs[0] : conv.name;
  const std::string w_name = rewrite::FreshName(graph, base + ".scaled_weight");
  graph.initializers[w_name] = std::move(new_w);
  conv.inputs[1] = w_name;
  if (b) {
    const std::string b_name = rewrite::FreshName(graph, base + ".scaled_bias");
    graph.initializers[b_name] = std::move(new_b);
    conv.inputs[2] = b_name;
  }
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
