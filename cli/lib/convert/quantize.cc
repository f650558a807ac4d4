#include "cli/lib/convert/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/identity_elimination.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"
#include "runtime/session.h"

namespace tandem::convert {
namespace {

using rewrite::Constant;
using rewrite::FreshName;

// A node with constant float32 weights: Conv (weights' axis 0 = output channels), MatMul
// (B [K, N]: axis 1) or Gemm (alpha = beta = 1, no transA; axis 0 with transB, else 1),
// with its optional constant 1-D bias.
struct Layer {
  size_t node = 0;
  int axis = 0;
  std::string bias;
};

std::optional<Layer> AsLayer(const Graph& g, size_t i, bool conv_too) {
  const Node& n = g.nodes[i];
  if (!n.domain.empty() || n.outputs.size() != 1 || !n.has_input(0) || !n.has_input(1) ||
      g.initializers.count(n.inputs[0]))
    return std::nullopt;
  const Tensor* w = Constant(g, n.inputs[1]);
  if (!w || w->dtype() != DataType::kFloat || w->numel() == 0) return std::nullopt;
  Layer l;
  l.node = i;
  int64_t channels = 0;
  if (n.op_type == "Conv" && conv_too && w->rank() >= 3) {
    l.axis = 0;
  } else if (n.op_type == "MatMul" && w->rank() == 2) {
    l.axis = 1;
  } else if (n.op_type == "Gemm" && w->rank() == 2 && n.attr_float("alpha", 1.f) == 1.f &&
             n.attr_float("beta", 1.f) == 1.f && n.attr_int("transA", 0) == 0) {
    l.axis = n.attr_int("transB", 0) ? 0 : 1;
  } else {
    return std::nullopt;
  }
  channels = w->dim(l.axis);
  if (n.has_input(2)) {
    const Tensor* b = Constant(g, n.inputs[2]);
    if (!b || b->dtype() != DataType::kFloat || b->rank() != 1 || b->numel() != channels) return std::nullopt;
    l.bias = n.inputs[2];
  }
  return l;
}

// w as int8, symmetric per channel along `axis`: scale[c] = max|w[..c..]| / 127 (1 for all-zero channels).
Tensor QuantizeWeights(const Tensor& w, int axis, std::vector<float>* scales) {
  const int64_t channels = w.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; d < w.rank(); ++d) inner *= w.dim(d);
  const float* p = w.data<float>();
  std::vector<float> top(static_cast<size_t>(channels), 0.f);
  for (int64_t i = 0; i < w.numel(); ++i) {
    float& t = top[(i / inner) % channels];
    t = std::max(t, std::fabs(p[i]));
  }
  scales->resize(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) (*scales)[c] = top[c] > 0.f ? top[c] / 127.f : 1.f;
  Tensor q = Tensor::Host(DataType::kInt8, w.dims());
  for (int64_t i = 0; i < w.numel(); ++i) {
    const float v = std::nearbyint(p[i] / (*scales)[(i / inner) % channels]);
    q.data<int8_t>()[i] = static_cast<int8_t>(std::min(127.f, std::max(-127.f, v)));
  }
  return q;
}

Tensor Transposed2D(const Tensor& t) {
  const int64_t r = t.dim(0), c = t.dim(1);
  Tensor o = Tensor::Host(DataType::kFloat, {c, r});
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) o.data<float>()[j * r + i] = t.data<float>()[i * c + j];
  return o;
}

Node MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
              const std::string& name) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

std::string Base(const Node& n) { return n.name.empty() ? n.outputs[0] : n.name; }

// Adds initializer `t` under a fresh name made from `base` and returns the name.
std::string AddConstant(Graph& g, const std::string& base, Tensor t) {
  const std::string name = FreshName(g, base);
  g.initializers[name] = std::move(t);
  return name;
}

}  // namespace

absl::StatusOr<QuantizeReport> QuantizeDynamic(Graph& g) {
  if (g.opset("") < 11)
    return absl::InvalidArgumentError("--quantize dynamic needs ai.onnx opset >= 11 (DynamicQuantizeLinear); "
                                      "the model has " + std::to_string(g.opset("")) + " (convert with --opset first)");
  EliminateIdentities(g);  // exporters pass shared weights through Identity nodes
  QuantizeReport report;
  std::map<std::string, std::vector<std::string>> quantized;  // A -> DynamicQuantizeLinear's outputs
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::optional<Layer> layer = AsLayer(g, i, false);
    if (!layer) {
      nodes.push_back(g.nodes[i]);
      continue;
    }
    const Node n = g.nodes[i];
    const std::string base = Base(n), a = n.inputs[0], out = n.outputs[0];
    const Tensor& w = g.initializers.at(n.inputs[1]);
    std::vector<float> scales;
    Tensor bq = QuantizeWeights(layer->axis == 0 ? Transposed2D(w) : w, 1, &scales);
    const int64_t N = bq.dim(1);
    auto& aq = quantized[a];
    if (aq.empty()) {
      aq = {FreshName(g, a + "_quantized"), FreshName(g, a + "_scale"), FreshName(g, a + "_zero_point")};
      nodes.push_back(MakeNode("DynamicQuantizeLinear", {a}, aq, a + "_QuantizeLinear"));
    }
    const std::string b_name = AddConstant(g, n.inputs[1] + "_quantized", std::move(bq));
    const std::string bs = AddConstant(g, n.inputs[1] + "_scale", Tensor::FromVector<float>(scales, {N}));
    Tensor zeros = Tensor::Host(DataType::kInt8, {N});
    std::fill_n(zeros.data<int8_t>(), N, int8_t{0});
    const std::string bz = AddConstant(g, n.inputs[1] + "_zero_point", std::move(zeros));
    const std::string sums = FreshName(g, base + "_MatMulInteger_output"), sums_f = FreshName(g, base + "_cast_output");
    const std::string scale = FreshName(g, base + "_scale"), product = layer->bias.empty() ? out : FreshName(g, base + "_product");
    nodes.push_back(MakeNode("MatMulInteger", {aq[0], b_name, aq[2], bz}, {sums}, base + "_MatMulInteger"));
    Node cast = MakeNode("Cast", {sums}, {sums_f}, base + "_cast");
    cast.attributes["to"] = IntAttribute(static_cast<int64_t>(DataType::kFloat));
    nodes.push_back(cast);
    nodes.push_back(MakeNode("Mul", {aq[1], bs}, {scale}, base + "_scale_product"));
    g.value_info[scale] = ValueInfo{scale, DataType::kFloat, Shape::Of({N})};
    nodes.push_back(MakeNode("Mul", {sums_f, scale}, {product}, base + "_rescale"));
    if (!layer->bias.empty()) nodes.push_back(MakeNode("Add", {product, layer->bias}, {out}, base + "_bias"));
    ++report.layers;
  }
  report.activations = static_cast<int>(quantized.size());
  g.nodes = std::move(nodes);
  EliminateDeadCode(g);
  return report;
}

absl::StatusOr<QuantizeReport> QuantizeStatic(Graph& g, const std::vector<std::map<std::string, Tensor>>& samples) {
  if (g.opset("") < 13)
    return absl::InvalidArgumentError("--quantize static needs ai.onnx opset >= 13 (per-channel scales); the model "
                                      "has " + std::to_string(g.opset("")) + " (convert with --opset 13 first)");
  if (samples.empty()) return absl::InvalidArgumentError("--quantize static needs calibration inputs");
  EliminateIdentities(g);  // exporters pass shared weights through Identity nodes
  std::vector<Layer> layers;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (std::optional<Layer> l = AsLayer(g, i, true)) layers.push_back(*l);
  // The values to quantize: each layer's input and its output (or its sole Relu's).
  const ValueReaders readers(g);
  std::vector<std::string> values;
  std::set<std::string> seen;
  auto want = [&](const std::string& v) {
    if (seen.insert(v).second) values.push_back(v);
  };
  for (const Layer& l : layers) {
    const Node& n = g.nodes[l.node];
    want(n.inputs[0]);
    const int r = readers.Sole(n.outputs[0]);
    const bool relu = r >= 0 && g.nodes[r].domain.empty() && g.nodes[r].op_type == "Relu";
    want(relu ? g.nodes[r].outputs[0] : n.outputs[0]);
  }
  // Sums of two activations (residual connections): both terms and the result. A Relu alone
  // reading the sum goes: its output's range starts at 0, so its zero point is 0 and the
  // QuantizeLinear of the sum saturates negative values to 0 by itself (ONNX Runtime's
  // quantizer does the same); the QuantizeLinear then reads the sum.
  std::map<std::string, std::string> sum_of_relu;  // dropped Relu's output -> the sum it read
  std::set<size_t> dropped;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!n.domain.empty() || n.op_type != "Add" || n.inputs.size() != 2 || n.outputs.size() != 1 ||
        g.initializers.count(n.inputs[0]) || g.initializers.count(n.inputs[1]) ||
        g.ValueType(n.inputs[0]) != DataType::kFloat || g.ValueType(n.inputs[1]) != DataType::kFloat)
      continue;
    want(n.inputs[0]);
    want(n.inputs[1]);
    const int r = readers.Sole(n.outputs[0]);
    if (r >= 0 && g.nodes[r].domain.empty() && g.nodes[r].op_type == "Relu") {
      want(g.nodes[r].outputs[0]);
      sum_of_relu[g.nodes[r].outputs[0]] = n.outputs[0];
      dropped.insert(static_cast<size_t>(r));
    } else {
      want(n.outputs[0]);
    }
  }

  // Calibration: the float model with every such value as an output, run on each sample.
  Graph calibration = g;
  std::set<std::string> outputs;
  for (const ValueInfo& o : g.outputs) outputs.insert(o.name);
  for (const std::string& v : values)
    if (!outputs.count(v)) calibration.outputs.push_back(ValueInfo{v, g.ValueType(v), Shape::Unknown()});
  SessionOptions so;
  so.providers = {"cpu"};
  auto session = Session::FromGraph(calibration, so);
  if (!session.ok()) return absl::Status(session.status().code(), "calibration: " + std::string(session.status().message()));
  std::map<std::string, std::pair<float, float>> range;  // value -> (min(0, lo), max(0, hi))
  for (size_t s = 0; s < samples.size(); ++s) {
    auto out = (*session)->Run(samples[s]);
    if (!out.ok())
      return absl::Status(out.status().code(), "calibration run " + std::to_string(s + 1) + ": " +
                                                   std::string(out.status().message()));
    const auto& names = (*session)->graph().outputs;
    for (size_t i = 0; i < names.size() && i < out->size(); ++i) {
      const Tensor& t = (*out)[i];
      if (!seen.count(names[i].name) || !t.is_tensor() || t.dtype() != DataType::kFloat) continue;
      auto& r = range.emplace(names[i].name, std::pair<float, float>{0.f, 0.f}).first->second;
      for (int64_t k = 0; k < t.numel(); ++k) {
        const float v = t.data<float>()[k];
        if (std::isfinite(v)) r = {std::min(r.first, v), std::max(r.second, v)};
      }
    }
  }

  // uint8 parameters of each calibrated value, its Q/DQ nodes, and every reader moved onto the
  // dequantized value.
  struct Quantized {
    std::string scale, zero, q, dq;
    float scale_value;
  };
  std::map<std::string, Quantized> quantized;
  std::map<std::string, std::string> value_of_dq;
  for (const auto& [v, r] : range) {
    Quantized q;
    const float width = r.second - r.first;
    q.scale_value = width > 0.f ? width / 255.f : 1.f;
    const float zp = std::min(255.f, std::max(0.f, std::nearbyint(-r.first / q.scale_value)));
    q.scale = AddConstant(g, v + "_scale", Tensor::FromVector<float>({q.scale_value}, {}));
    Tensor z = Tensor::Host(DataType::kUint8, {});
    z.data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    q.zero = AddConstant(g, v + "_zero_point", std::move(z));
    q.q = FreshName(g, v + "_QuantizeLinear_Output");
    q.dq = FreshName(g, v + "_DequantizeLinear_Output");
    quantized[v] = q;
    value_of_dq[q.dq] = v;
    rewrite::RedirectReads(g, v, q.dq);
  }
  auto qdq = [&](const std::string& v, std::vector<Node>& nodes) {
    const Quantized& q = quantized.at(v);
    auto sum = sum_of_relu.find(v);
    const std::string& source = sum == sum_of_relu.end() ? v : sum->second;
    nodes.push_back(MakeNode("QuantizeLinear", {source, q.scale, q.zero}, {q.q}, v + "_QuantizeLinear"));
    nodes.push_back(MakeNode("DequantizeLinear", {q.q, q.scale, q.zero}, {q.dq}, v + "_DequantizeLinear"));
  };

  QuantizeReport report;
  std::vector<Node> nodes;
  for (const ValueInfo& in : g.inputs)
    if (quantized.count(in.name)) qdq(in.name, nodes);
  std::map<size_t, const Layer*> layer_at;
  for (const Layer& l : layers) layer_at[l.node] = &l;
  std::map<std::string, std::string> relu_of_sum;
  for (const auto& [relu, sum] : sum_of_relu) relu_of_sum[sum] = relu;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (dropped.count(i) && quantized.count(g.nodes[i].outputs[0])) continue;  // the QuantizeLinear clips
    Node n = g.nodes[i];
    auto l = layer_at.find(i);
    auto v = l == layer_at.end() ? value_of_dq.end() : value_of_dq.find(n.inputs[0]);  // its input, dequantized
    if (v != value_of_dq.end()) {
      const auto x = quantized.find(v->second);
      const std::string base = Base(n);
      std::vector<float> ws;
      const Tensor& w = g.initializers.at(n.inputs[1]);
      Tensor wq = QuantizeWeights(w, l->second->axis, &ws);
      const int64_t M = static_cast<int64_t>(ws.size());
      Tensor wz = Tensor::Host(DataType::kInt8, {M});
      std::fill_n(wz.data<int8_t>(), M, int8_t{0});
      const std::string wq_name = AddConstant(g, n.inputs[1] + "_quantized", std::move(wq));
      const std::string ws_name = AddConstant(g, n.inputs[1] + "_scale", Tensor::FromVector<float>(ws, {M}));
      const std::string wz_name = AddConstant(g, n.inputs[1] + "_zero_point", std::move(wz));
      // Names made from the node's (unique) name: the nodes made here are not in g yet, so
      // FreshName cannot tell two layers sharing one weight apart.
      const std::string w_dq = FreshName(g, base + "_weights_DequantizeLinear_Output");
      Node dw = MakeNode("DequantizeLinear", {wq_name, ws_name, wz_name}, {w_dq}, base + "_weights_DequantizeLinear");
      dw.attributes["axis"] = IntAttribute(l->second->axis);
      nodes.push_back(dw);
      n.inputs[1] = w_dq;
      if (!l->second->bias.empty()) {
        const Tensor& b = g.initializers.at(l->second->bias);
        std::vector<int32_t> bq(static_cast<size_t>(M));
        std::vector<float> bs(static_cast<size_t>(M));
        for (int64_t m = 0; m < M; ++m) {
          bs[m] = x->second.scale_value * ws[m];
          const double v = std::nearbyint(static_cast<double>(b.data<float>()[m]) / bs[m]);
          bq[m] = static_cast<int32_t>(std::min<double>(std::numeric_limits<int32_t>::max(),
                                                        std::max<double>(std::numeric_limits<int32_t>::min(), v)));
        }
        const std::string bq_name = AddConstant(g, l->second->bias + "_quantized", Tensor::FromVector<int32_t>(bq, {M}));
        const std::string bs_name = AddConstant(g, l->second->bias + "_scale", Tensor::FromVector<float>(bs, {M}));
        const std::string b_dq = FreshName(g, base + "_bias_DequantizeLinear_Output");
        Node db = MakeNode("DequantizeLinear", {bq_name, bs_name}, {b_dq}, base + "_bias_DequantizeLinear");
        db.attributes["axis"] = IntAttribute(0);
        nodes.push_back(db);
        n.inputs[2] = b_dq;
      }
      ++report.layers;
    }
    nodes.push_back(n);
    for (const std::string& o : n.outputs) {
      if (quantized.count(o)) qdq(o, nodes);
      auto relu = relu_of_sum.find(o);
      if (relu != relu_of_sum.end() && quantized.count(relu->second)) qdq(relu->second, nodes);
    }
  }
  report.activations = static_cast<int>(quantized.size());
  g.nodes = std::move(nodes);
  EliminateDeadCode(g);
  return report;
}

}  // namespace tandem::convert
