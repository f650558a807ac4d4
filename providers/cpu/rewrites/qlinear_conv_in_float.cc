#include "providers/cpu/rewrites/qlinear_conv_in_float.h"

#include <vector>

#include "graph/passes.h"
#include "providers/cpu/kernels/quantization/int8_matmul.h"

namespace tandem::cpu {
namespace {

const Tensor* Initializer(const Graph& g, const Node& n, size_t i) {
  if (!n.has_input(i)) return nullptr;
  auto it = g.initializers.find(n.inputs[i]);
  return it == g.initializers.end() ? nullptr : &it->second;
}

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

// The float32 weights and bias of QLinearConv `n`, or false when they are not constants of
// the expected shapes.
bool FloatParameters(const Graph& g, const Node& n, Tensor* w_float, Tensor* b_float) {
  const Tensor* w = Initializer(g, n, 3);
  const Tensor* ws = Initializer(g, n, 4);
  const Tensor* wz = n.has_input(5) ? Initializer(g, n, 5) : nullptr;
  if (!w || !ws || (n.has_input(5) && !wz) || !Is8Bit(w->dtype()) || w->rank() < 3 || ws->dtype() != DataType::kFloat)
    return false;
  const int64_t M = w->dim(0), per = w->numel() / std::max<int64_t>(M, 1);
  auto per_m = [&](const Tensor* t) { return !t || t->numel() == 1 || t->numel() == M; };
  if (!per_m(ws) || !per_m(wz) || (wz && wz->dtype() != w->dtype())) return false;
  *w_float = Tensor::Host(DataType::kFloat, w->dims());
  for (int64_t m = 0; m < M; ++m) {
    const float s = ws->data<float>()[ws->numel() == 1 ? 0 : m];
    const double z = wz ? wz->ElementAsDouble(wz->numel() == 1 ? 0 : m) : 0.0;
    for (int64_t i = 0; i < per; ++i)
      w_float->data<float>()[m * per + i] = static_cast<float>(w->ElementAsDouble(m * per + i) - z) * s;
  }
  if (!n.has_input(8)) return true;
  const Tensor* b = Initializer(g, n, 8);
  const Tensor* xs = Initializer(g, n, 1);
  if (!b || !xs || b->dtype() != DataType::kInt32 || b->numel() != M || xs->dtype() != DataType::kFloat ||
      xs->numel() != 1)
    return false;
  *b_float = Tensor::Host(DataType::kFloat, {M});
  for (int64_t m = 0; m < M; ++m) {  // DequantizeLinear of b with scale x_scale * w_scale[m]
    const float scale = xs->data<float>()[0] * ws->data<float>()[ws->numel() == 1 ? 0 : m];
    b_float->data<float>()[m] = static_cast<float>(static_cast<double>(b->data<int32_t>()[m])) * scale;
  }
  return true;
}

}  // namespace

int QLinearConvInFloat(Graph& graph, const std::string& provider) {
  if (Int8DotProductsExact() || graph.HasGradientNodes()) return 0;
  int rewritten = 0;
  std::vector<Node> nodes;
  nodes.reserve(graph.nodes.size());
  for (Node& n : graph.nodes) {
    Tensor w_float, b_float;
    if (n.provider != provider || !n.domain.empty() || n.op_type != "QLinearConv" || n.outputs.size() != 1 ||
        n.inputs.size() < 8 || !FloatParameters(graph, n, &w_float, &b_float)) {
      nodes.push_back(std::move(n));
      continue;
    }
    const std::string base = n.name.empty() ? n.outputs[0] : n.name;
    const std::string x_float = UnusedValueName(graph, base + "/dequantized_input");
    const std::string y_float = UnusedValueName(graph, base + "/float_output");
    const std::string w_name = UnusedValueName(graph, base + "/float_weights");
    graph.initializers[w_name] = std::move(w_float);
    graph.constants.insert(w_name);
    graph.value_info[x_float] = ValueInfo{x_float, DataType::kFloat, Shape::Unknown()};
    graph.value_info[y_float] = ValueInfo{y_float, DataType::kFloat, Shape::Unknown()};
    Node dq, conv, q;
    dq.name = base + "/dequantize";
    dq.op_type = "DequantizeLinear";
    dq.inputs = {n.inputs[0], n.inputs[1]};
    if (n.has_input(2)) dq.inputs.push_back(n.inputs[2]);
    dq.outputs = {x_float};
    conv.name = base;
    conv.op_type = "Conv";
    conv.attributes = n.attributes;
    conv.inputs = {x_float, w_name};
    if (n.has_input(8)) {
      const std::string b_name = UnusedValueName(graph, base + "/float_bias");
      graph.initializers[b_name] = std::move(b_float);
      graph.constants.insert(b_name);
      conv.inputs.push_back(b_name);
    }
    conv.outputs = {y_float};
    q.name = base + "/quantize";
    q.op_type = "QuantizeLinear";
    q.inputs = {y_float, n.inputs[6]};
    if (n.has_input(7)) q.inputs.push_back(n.inputs[7]);
    q.outputs = {n.outputs[0]};
    for (Node* made : {&dq, &conv, &q}) {
      made->provider = provider;
      nodes.push_back(std::move(*made));
    }
    ++rewritten;
  }
  graph.nodes = std::move(nodes);
  return rewritten;
}

}  // namespace tandem::cpu
