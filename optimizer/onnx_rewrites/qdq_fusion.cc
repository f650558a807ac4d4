#include "optimizer/onnx_rewrites/qdq_fusion.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {

namespace {

using rewrite::Constant;
using rewrite::IsOnnx;

using rewrite::OneValueScale;
using rewrite::OneValueZeroPoint;

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

class QdqFusion {
 public:
  explicit QdqFusion(Graph& graph) : graph_(graph), producers_(Producers(graph)), readers_(graph) {}

  int Run() {
    if (graph_.opset("") < 10) return 0;
    int fused = 0;
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
      if (((IsOnnx(graph_.nodes[i], "Conv") || IsOnnx(graph_.nodes[i], "MatMul")) && TryFuse(i)) ||
          (IsOnnx(graph_.nodes[i], "Gemm") && TryGemm(i)))
        ++fused;
    if (!fused) return 0;
    std::vector<Node> nodes;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (removed_.count(i)) continue;
      auto r = replacements_.find(i);
      if (r == replacements_.end()) {
        nodes.push_back(std::move(graph_.nodes[i]));
      } else {
        for (Node& n : r->second) nodes.push_back(std::move(n));
      }
    }
    graph_.nodes = std::move(nodes);
    // The DequantizeLinear nodes only the fused nodes read.
    const ValueReaders after(graph_);
    std::set<size_t> unread;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node& n = graph_.nodes[i];
      if (IsOnnx(n, "DequantizeLinear") && dequantized_.count(n.outputs[0]) && after.nodes(n.outputs[0]).empty() &&
          !after.pinned(n.outputs[0]))
        unread.insert(i);
    }
    rewrite::RemoveNodes(graph_, unread);
    return fused;
  }

 private:
  // The per-tensor DequantizeLinear writing `value`, or null.
  const Node* Dequantizer(const std::string& value) const {
    auto it = producers_.find(value);
    if (it == producers_.end()) return nullptr;
    const Node& n = graph_.nodes[it->second];
    if (!IsOnnx(n, "DequantizeLinear") || n.attr_int("block_size", 0) != 0 || n.outputs.size() != 1) return nullptr;
    return &n;
  }

  // A layer's operands: x through a per-tensor DequantizeLinear with a one-value scale and
  // zero point, w a constant 8-bit tensor through a DequantizeLinear.
  struct Operands {
    const Node* dx = nullptr;
    const Node* dw = nullptr;
    const Tensor* w = nullptr;
  };
  std::optional<Operands> QuantizedOperands(const Node& layer) const {
    if (layer.outputs.size() != 1 || !layer.has_input(0) || !layer.has_input(1)) return std::nullopt;
    Operands o{Dequantizer(layer.inputs[0]), Dequantizer(layer.inputs[1]), nullptr};
    if (!o.dx || !o.dw || !o.dx->has_input(2) || !OneValueScale(graph_, o.dx->inputs[1]) ||
        !OneValueZeroPoint(graph_, o.dx->inputs[2]))
      return std::nullopt;
    o.w = Constant(graph_, o.dw->inputs[0]);
    if (!o.w || !Is8Bit(o.w->dtype()) || o.w->numel() == 0) return std::nullopt;
    return o;
  }

  // The sole reader of `value` when it is an ONNX `op`, else null.
  const Node* SoleReader(const std::string& value, const char* op) const {
    const int r = readers_.Sole(value);
    return r >= 0 && IsOnnx(graph_.nodes[r], op) ? &graph_.nodes[r] : nullptr;
  }

  // Weight scale and zero point per tensor or per output channel (`channel_axis` of w: 0 of a
  // convolution's [M, ...], 1 of a MatMul's [K, N]); the scales in *scales, and whether the
  // zero point is given (else zeros: WeightZeroPoint makes them once the rewrite is certain).
  bool WeightParams(const Node& dw, const Tensor& w, int channel_axis, std::vector<float>* scales) const {
    const Tensor* ws = Constant(graph_, dw.inputs[1]);
    const int64_t M = w.dim(channel_axis);
    if (!ws || ws->dtype() != DataType::kFloat) return false;
    const bool per_channel = ws->numel() != 1 || ws->rank() == 1;
    if (per_channel) {
      int64_t axis = dw.attr_int("axis", 1);
      if (axis < 0) axis += w.rank();
      if (ws->rank() != 1 || ws->numel() != M || axis != channel_axis) return false;
    }
    scales->assign(ws->data<float>(), ws->data<float>() + ws->numel());
    if (!dw.has_input(2)) return true;
    const Tensor* wz = Constant(graph_, dw.inputs[2]);
    return wz && wz->dtype() == w.dtype() && wz->numel() == ws->numel();
  }

  // The weights' zero point: the DequantizeLinear's, or a new one-value zeros initializer.
  std::string WeightZeroPoint(const Node& dw, DataType type) {
    if (dw.has_input(2)) return dw.inputs[2];
    const std::string name = rewrite::FreshName(graph_, dw.inputs[0] + "_zero_point");
    Tensor zero = Tensor::Host(type, {});
    static_cast<uint8_t*>(zero.raw())[0] = 0;
    graph_.initializers[name] = std::move(zero);
    return name;
  }

  // An int32 bias [M] dequantized with scale x_scale * w_scale and zero point 0.
  bool BiasMatches(const Node& db, int64_t M, float x_scale, const std::vector<float>& w_scales) const {
    const Tensor* bq = Constant(graph_, db.inputs[0]);
    const Tensor* bs = Constant(graph_, db.inputs[1]);
    if (!bq || bq->dtype() != DataType::kInt32 || bq->rank() != 1 || bq->numel() != M) return false;
    if (!bs || bs->dtype() != DataType::kFloat || (bs->numel() != 1 && bs->numel() != M)) return false;
    if (db.has_input(2)) {
      const Tensor* bz = Constant(graph_, db.inputs[2]);
      if (!bz) return false;
      for (int64_t i = 0; i < bz->numel(); ++i)
        if (bz->ElementAsInt64(i) != 0) return false;
    }
    for (int64_t m = 0; m < M; ++m) {
      const float want = x_scale * w_scales[w_scales.size() == 1 ? 0 : m];
      const float got = bs->data<float>()[bs->numel() == 1 ? 0 : m];
      if (!(std::fabs(got - want) <= 1e-6f * std::fabs(want))) return false;
    }
    return true;
  }

  bool TryFuse(size_t ci) {
    const Node& conv = graph_.nodes[ci];
    const std::optional<Operands> ops = QuantizedOperands(conv);
    if (!ops || readers_.pinned(conv.outputs[0])) return false;
    const Node *dx = ops->dx, *dw = ops->dw;
    const Tensor* w = ops->w;
    const bool matmul = conv.op_type == "MatMul";
    if (matmul ? w->rank() != 2 : w->rank() < 3) return false;
    const int channel_axis = matmul ? 1 : 0;
    // The quantization of the output, through a Relu that changes nothing.
    const Node* q = SoleReader(conv.outputs[0], "QuantizeLinear");
    const Node* relu = q ? nullptr : SoleReader(conv.outputs[0], "Relu");
    if (relu) {
      if (relu->outputs.size() != 1 || readers_.pinned(relu->outputs[0])) return false;
      q = SoleReader(relu->outputs[0], "QuantizeLinear");
    }
    if (!q || q->attr_int("block_size", 0) != 0 || !q->has_input(2) || !OneValueScale(graph_, q->inputs[1]))
      return false;
    const Tensor* yz = OneValueZeroPoint(graph_, q->inputs[2]);
    if (!yz) return false;
    if (relu && yz->ElementAsInt64(0) != (yz->dtype() == DataType::kUint8 ? 0 : -128)) return false;
    const Node* db = nullptr;
    if (!matmul && conv.has_input(2) && !(db = Dequantizer(conv.inputs[2]))) return false;
    const size_t iq = static_cast<size_t>(&*q - graph_.nodes.data());
    const size_t ir = relu ? static_cast<size_t>(&*relu - graph_.nodes.data()) : 0;

    std::vector<float> w_scales;
    const float x_scale = Constant(graph_, dx->inputs[1])->data<float>()[0];
    if (!WeightParams(*dw, *w, channel_axis, &w_scales)) return false;
    if (db && !BiasMatches(*db, w->dim(0), x_scale, w_scales)) return false;

    Node fused;
    fused.name = conv.name;
    fused.op_type = matmul ? "QLinearMatMul" : "QLinearConv";
    fused.attributes = conv.attributes;
    fused.inputs = {dx->inputs[0], dx->inputs[1], dx->inputs[2], dw->inputs[0], dw->inputs[1],
                    WeightZeroPoint(*dw, w->dtype()), q->inputs[1], q->inputs[2]};
    if (db) fused.inputs.push_back(db->inputs[0]);
    fused.outputs = {q->outputs[0]};
    removed_.insert(iq);
    if (relu) removed_.insert(ir);
    dequantized_.insert(dx->outputs[0]);
    dequantized_.insert(dw->outputs[0]);
    if (db) dequantized_.insert(db->outputs[0]);
    graph_.nodes[ci] = std::move(fused);
    return true;
  }

  // DequantizeLinear(a) -> Gemm(., DequantizeLinear(b), [DequantizeLinear(int32 c) or a float c]) with
  // alpha = beta = 1, no transA, b a constant 8-bit matrix per tensor or per output column:
  //   MatMulInteger(a_q, b_q [K, N], a_zp, b_zp) -> Cast -> Mul(a_scale * b_scale) [-> Add(c as float)]
  // writing the Gemm's output (the CPU provider runs these as one MatMulIntegerToFloat).
  bool TryGemm(size_t gi) {
    const Node& gemm = graph_.nodes[gi];
    if (gemm.attr_float("alpha", 1.f) != 1.f || gemm.attr_float("beta", 1.f) != 1.f || gemm.attr_int("transA", 0) != 0)
      return false;
    const std::optional<Operands> ops = QuantizedOperands(gemm);
    if (!ops || ops->w->rank() != 2) return false;
    const Node *dx = ops->dx, *dw = ops->dw;
    const Tensor* w = ops->w;
    const bool trans_b = gemm.attr_int("transB", 0) != 0;
    const int64_t K = w->dim(trans_b ? 1 : 0), N = w->dim(trans_b ? 0 : 1);
    std::vector<float> w_scales;
    if (!WeightParams(*dw, *w, trans_b ? 0 : 1, &w_scales)) return false;
    const float x_scale = Constant(graph_, dx->inputs[1])->data<float>()[0];
    // The bias as float [N]: DequantizeLinear's own arithmetic on an int32 bias, or a float constant.
    std::vector<float> bias;
    const Node* db = nullptr;
    if (gemm.has_input(2)) {
      if ((db = Dequantizer(gemm.inputs[2]))) {
        if (!BiasMatches(*db, N, x_scale, w_scales)) return false;
        const Tensor& bq = *Constant(graph_, db->inputs[0]);
        const Tensor& bs = *Constant(graph_, db->inputs[1]);
        for (int64_t n = 0; n < N; ++n)
          bias.push_back(static_cast<float>(static_cast<double>(bq.data<int32_t>()[n])) *
                         bs.data<float>()[bs.numel() == 1 ? 0 : n]);
      } else {
        const Tensor* c = Constant(graph_, gemm.inputs[2]);
        if (!c || c->dtype() != DataType::kFloat || c->rank() != 1 || c->numel() != N) return false;
        bias.assign(c->data<float>(), c->data<float>() + N);
      }
    }
    const std::string base = gemm.name.empty() ? gemm.outputs[0] : gemm.name;
    std::string b_name = dw->inputs[0];
    if (trans_b) {  // MatMulInteger's B is [K, N]
      Tensor t = Tensor::Host(w->dtype(), {K, N});
      const uint8_t* src = static_cast<const uint8_t*>(w->raw());  // 8-bit values
      uint8_t* dst = static_cast<uint8_t*>(t.raw());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) dst[k * N + n] = src[n * K + k];
      b_name = rewrite::FreshName(graph_, base + "_weights_KxN");
      graph_.initializers[b_name] = std::move(t);
    }
    std::vector<float> scale(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) scale[n] = x_scale * w_scales[w_scales.size() == 1 ? 0 : n];
    const std::string scale_name = rewrite::FreshName(graph_, base + "_scale");
    graph_.initializers[scale_name] = Tensor::FromVector<float>(scale, {N});
    const std::string sums = rewrite::FreshName(graph_, base + "_sums"), sums_f = rewrite::FreshName(graph_, base + "_sums_float");
    const std::string scaled = bias.empty() ? gemm.outputs[0] : rewrite::FreshName(graph_, base + "_scaled");
    std::vector<Node>& made = replacements_[gi];
    auto add = [&](const char* op, std::vector<std::string> in, const std::string& out, const std::string& suffix) {
      Node n;
      n.name = base + suffix;
      n.op_type = op;
      n.inputs = std::move(in);
      n.outputs = {out};
      made.push_back(std::move(n));
      return &made.back();
    };
    add("MatMulInteger", {dx->inputs[0], b_name, dx->inputs[2], WeightZeroPoint(*dw, w->dtype())}, sums, "");
    add("Cast", {sums}, sums_f, "/cast")->attributes["to"] = IntAttribute(static_cast<int64_t>(DataType::kFloat));
    add("Mul", {sums_f, scale_name}, scaled, "/scale");
    if (!bias.empty()) {
      const std::string bias_name = rewrite::FreshName(graph_, base + "_bias");
      graph_.initializers[bias_name] = Tensor::FromVector<float>(bias, {N});
      add("Add", {scaled, bias_name}, gemm.outputs[0], "/bias");
    }
    dequantized_.insert(dx->outputs[0]);
    dequantized_.insert(dw->outputs[0]);
    if (db) dequantized_.insert(db->outputs[0]);
    return true;
  }

  Graph& graph_;
  const std::map<std::string, size_t> producers_;
  const ValueReaders readers_;
  std::set<size_t> removed_;                   // nodes to drop: the QuantizeLinear (and Relu) of each fusion
  std::map<size_t, std::vector<Node>> replacements_;  // a Gemm's index -> the nodes that replace it
  std::set<std::string> dequantized_;          // outputs of DequantizeLinear nodes the fusions read through
};

}  // namespace

int FuseQdqNodes(Graph& graph) { return QdqFusion(graph).Run(); }

}  // namespace tandem
