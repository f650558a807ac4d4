#include "optimizer/onnx_rewrites/bias_folding.h"

#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

// A float32 constant of `n` values shaped [n] or [1, n].
bool IsRowBias(const Tensor* c, int64_t n) {
  if (!c || c->dtype() != DataType::kFloat || c->numel() != n) return false;
  return (c->rank() == 1) || (c->rank() == 2 && c->dim(0) == 1);
}

// Rewrites `producer` to add `bias` itself; false (unchanged) when the pattern does not hold.
bool Absorb(Graph& graph, Node& producer, const std::string& bias_name) {
  const Tensor* bias = Constant(graph, bias_name);
  const Tensor* w = producer.has_input(1) ? Constant(graph, producer.inputs[1]) : nullptr;
  if (!w || w->dtype() != DataType::kFloat) return false;
  if (IsOnnx(producer, "MatMul")) {
    const Shape* a = rewrite::KnownShape(graph, producer.inputs[0]);
    if (!a || a->dims.size() != 2 || w->rank() != 2 || !IsRowBias(bias, w->dim(1))) return false;
    producer.op_type = "Gemm";
    producer.inputs.push_back(bias_name);
    return true;
  }
  if (IsOnnx(producer, "Gemm")) {
    if (producer.has_input(2) || w->rank() != 2) return false;
    const int64_t n = producer.attr_int("transB", 0) ? w->dim(0) : w->dim(1);
    if (!IsRowBias(bias, n)) return false;
    producer.inputs.resize(3);
    producer.inputs[2] = bias_name;
    producer.attributes["beta"] = FloatAttribute(1.f);
    return true;
  }
  if (IsOnnx(producer, "Conv")) {
    if (w->rank() < 3 || !rewrite::IsPerChannelConstant(bias, w->dim(0), w->rank())) return false;
    const Tensor* own = producer.has_input(2) ? Constant(graph, producer.inputs[2]) : nullptr;
    if (producer.has_input(2) && !(own && own->dtype() == DataType::kFloat && own->numel() == w->dim(0)))
      return false;
    const std::string flat = rewrite::FreshName(graph, bias_name + ".per_channel");
    Tensor sum = bias->Reshaped({w->dim(0)}).Clone();
    if (own)  // the Conv's own bias plus the Add's
      for (int64_t c = 0; c < w->dim(0); ++c) sum.data<float>()[c] += own->data<float>()[c];
    graph.initializers[flat] = std::move(sum);
    producer.inputs.resize(3);
    producer.inputs[2] = flat;
    return true;
  }
  return false;
}

}  // namespace

int FoldBiasAdds(Graph& graph, bool convolutions_only) {
  return rewrite::FoldIntoProducers(
      graph,
      [](const Node& n) {
        return IsOnnx(n, "Add") && n.inputs.size() == 2 ? std::vector<int>{0, 1} : std::vector<int>{};
      },
      [convolutions_only](Graph& g, Node& producer, const Node& add, int slot) {
        const std::string& bias = add.inputs[1 - slot];
        return (!convolutions_only || IsOnnx(producer, "Conv")) && Constant(g, bias) && Absorb(g, producer, bias);
      });
}

}  // namespace tandem
