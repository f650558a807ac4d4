#include "providers/cpu/rewrites/blocked_layout.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "graph/value_readers.h"
#include "ops/reduce_axes.h"
#include "providers/cpu/channel_block.h"
#include "providers/cpu/kernels/quantization/int8_matmul.h"
#include "providers/cpu/rewrites/convolution_node.h"

namespace tandem::cpu {
namespace {

// Ops that map each element to one element by itself (input 0; other inputs are scalars).
const std::set<std::string> kUnary = {
    "Relu",    "LeakyRelu", "Clip",     "Sigmoid", "Tanh", "HardSigmoid", "HardSwish",
    "Elu",     "Selu",      "Celu",     "Softplus", "Softsign", "Neg", "Abs", "Exp", "Sqrt",
    "Erf",     "Identity",  "Mish",     "ThresholdedRelu", "Gelu"};
// Element-wise ops over all inputs, with broadcasting.
const std::set<std::string> kElementwise = {"Add", "Sub", "Mul", "Div", "Sum", "Max", "Min", "Mean"};

std::string BlockedName(const std::string& value) { return value + "#blocked"; }
// The name of a plain value's ToBlocked copy (a ConvertsPlainInput Resize reads it).
std::string ToBlockedName(const std::string& value) { return value + "#to_blocked"; }

class BlockedLayoutPass {
 public:
  BlockedLayoutPass(Graph& graph, const std::string& provider, int block, int image_block)
      : graph_(graph), provider_(provider), block_(block), image_block_(image_block) {}

  int Run() {
    const ValueReaders readers(graph_);
    producers_ = Producers(graph_);
    int rewritten = 0;
    for (Node& n : graph_.nodes) {
      if (n.provider != provider_) continue;
      if (const Node* pool = ImageConvPool(n, readers)) {
        BlockImageConv(n, *pool);
        ++rewritten;
      } else if (TryBlock(n, readers)) {
        ++rewritten;
      }
    }
    rewritten -= UnblockResizesReadPlain();
    if (rewritten) InsertFromBlocked();
    return rewritten;
  }

 private:
  // Blocked in the graph's layout (block_).
  bool IsBlocked(const std::string& value) const {
    auto it = block_of_.find(value);
    return it != block_of_.end() && it->second == block_;
  }

  bool IsScalarConstant(const std::string& value) const {
    auto it = graph_.initializers.find(value);
    return it != graph_.initializers.end() && it->second.numel() == 1 && it->second.rank() <= 4;
  }

  // Whether `n` can run blocked, given which of its inputs are blocked.
  bool Blockable(const Node& n) const {
    const bool onnx = n.domain.empty();
    const bool input_blocked = n.has_input(0) && IsBlocked(n.inputs[0]);
    if (IsConvolution(n)) return ConvBlockable(n);
    if (onnx && n.op_type == "QLinearConv") return QLinearConvBlockable(n);
    if (n.domain == kTandemDomain && n.op_type == "QLinearLookup")  // element by element, a constant table
      return n.inputs.size() == 2 && IsBlocked(n.inputs[0]) && graph_.initializers.count(n.inputs[1]);
    if (n.domain == kTandemDomain && (n.op_type == "QLinearAdd" || n.op_type == "QLinearMul"))  // element-wise
      return n.inputs.size() == 8 && IsBlocked(n.inputs[0]) && IsBlocked(n.inputs[3]);
    if (n.domain == kTandemDomain && n.op_type == "FusedGroupNorm")  // any layout (kernels/nn/fused_group_norm.cc)
      return input_blocked && n.outputs.size() == 1;
    if (n.domain == kTandemDomain && n.op_type == "Gelu")  // element by element (optimizer/gelu_fusion.h)
      return input_blocked && n.outputs.size() == 1;
    if (!onnx || n.outputs.size() != 1 || !input_blocked) return false;
    if (kUnary.count(n.op_type)) return true;
    if (n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear") {  // per tensor: element by element
      if (!n.has_input(1) || n.attr_int("block_size", 0) != 0) return false;
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (!n.inputs[i].empty() && !(IsScalarConstant(n.inputs[i]) && graph_.initializers.at(n.inputs[i]).rank() <= 1))
          return false;
      return true;
    }
    if (kElementwise.count(n.op_type)) {
      for (const std::string& in : n.inputs)
        if (in.empty() || !(IsBlocked(in) || IsScalarConstant(in))) return false;
      return true;
    }
    if (n.op_type == "Concat") {
      for (const std::string& in : n.inputs)
        if (in.empty() || !IsBlocked(in)) return false;
      const int64_t axis = n.attr_int("axis", 1);
      return axis == 1 || axis == -3;  // blocked values are logically rank 4
    }
    if (n.op_type == "Resize") return ResizesOnlyHW(n);
    if (n.op_type == "MaxPool") return n.attr_int("storage_order", 0) == 0;
    if (n.op_type == "AveragePool")
      return !(n.attr_int("count_include_pad", 0) && n.attr_int("ceil_mode", 0));
    if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool" || IsSpatialMean(n)) return true;
    if (n.op_type == "BatchNormalization") {
      if (graph_.opset("") < 9 || n.attr_int("training_mode", 0)) return false;
      for (size_t i = 1; i <= 4; ++i)
        if (!n.has_input(i) || graph_.ValueType(n.inputs[i]) != DataType::kFloat) return false;
      return true;
    }
    return false;
  }

  // A Resize (opset 11 on) of a logically [N, C, H, W] value that keeps N and C, known from
  // its constant scales or sizes or, where they are computed, from the inferred shapes; not
  // tf_crop_and_resize (its extrapolation runs on the reference kernel only).
  bool ResizesOnlyHW(const Node& n) const {
    if (graph_.opset("") < 11 || n.attr_string("coordinate_transformation_mode", "") == "tf_crop_and_resize")
      return false;
    const std::vector<int64_t> axes = n.attr_ints("axes");
    if (!axes.empty()) {
      std::set<int64_t> resized;
      for (int64_t a : axes) resized.insert(a < 0 ? a + 4 : a);
      return resized == std::set<int64_t>{2, 3} || resized == std::set<int64_t>{2} || resized == std::set<int64_t>{3};
    }
    const ValueInfo* in = graph_.FindValueInfo(n.inputs[0]);
    if (!in || !in->shape.rank_known || in->shape.dims.size() != 4) return false;
    const auto& d = in->shape.dims;
    auto constant = [&](size_t i) -> const Tensor* {
      auto it = n.has_input(i) ? graph_.initializers.find(n.inputs[i]) : graph_.initializers.end();
      return it != graph_.initializers.end() && it->second.numel() == 4 ? &it->second : nullptr;
    };
    if (const Tensor* scales = constant(2))
      return scales->ElementAsDouble(0) == 1.0 && scales->ElementAsDouble(1) == 1.0;
    if (const Tensor* sizes = constant(3))
      return d[0].known() && d[1].known() && sizes->ElementAsInt64(0) == d[0].value &&
             sizes->ElementAsInt64(1) == d[1].value;
    const ValueInfo* out = graph_.FindValueInfo(n.outputs[0]);
    if (!out || !out->shape.rank_known || out->shape.dims.size() != 4) return false;
    const auto& o = out->shape.dims;
    return d[0].known() && d[1].known() && o[0].known() && o[1].known() && o[0].value == d[0].value &&
           o[1].value == d[1].value;
  }

  // ReduceMean over both spatial axes of a (logically rank-4) value, keeping them:
  // GlobalAveragePool's result, as exporters write the squeeze-and-excitation pool of
  // EfficientNet, MobileNetV3 and RegNetY. Run as that, blocked, it needs no FromBlocked.
  bool IsSpatialMean(const Node& n) const {
    if (n.op_type != "ReduceMean" || n.attr_int("keepdims", 1) != 1) return false;
    const std::optional<std::vector<int64_t>> axes = ConstantReduceAxes(graph_, n);
    if (!axes || axes->size() != 2) return false;
    for (int64_t a : *axes)
      if (a < -4 || a > 3) return false;
    const std::set<int64_t> spatial = {((*axes)[0] + 4) % 4, ((*axes)[1] + 4) % 4};
    return spatial == std::set<int64_t>{2, 3};
  }

  // A Resize of a plain float [N, C, H, W] value (C known; a multiple of the block unless
  // channels-last) that ResizesOnlyHW and writes at least as many pixels as it reads.
  bool UpsamplesPlainMap(const Node& n) const {
    if (!n.domain.empty() || n.op_type != "Resize" || n.outputs.size() != 1 || !n.has_input(0) ||
        n.provider != provider_ || IsBlocked(n.inputs[0]) || graph_.ValueType(n.inputs[0]) != DataType::kFloat ||
        !ResizesOnlyHW(n))
      return false;
    const ValueInfo* in = graph_.FindValueInfo(n.inputs[0]);
    if (!in || !in->shape.rank_known || in->shape.dims.size() != 4) return false;
    for (int d = 1; d < 4; ++d)
      if (!in->shape.dims[d].known()) return false;
    if (block_ != kChannelsLast && in->shape.dims[1].value % block_ != 0) return false;
    const int64_t h = in->shape.dims[2].value, w = in->shape.dims[3].value;
    const std::optional<std::pair<int64_t, int64_t>> out = ResizedHW(n, h, w);
    return out && out->first * out->second >= h * w;
  }

  // The output H and W of Resize `n` of an h x w map: from the inferred shape, else from
  // its constant sizes or scales (of rank 4); nullopt when none says.
  std::optional<std::pair<int64_t, int64_t>> ResizedHW(const Node& n, int64_t h, int64_t w) const {
    const ValueInfo* out = graph_.FindValueInfo(n.outputs[0]);
    if (out && out->shape.rank_known && out->shape.dims.size() == 4 && out->shape.dims[2].known() &&
        out->shape.dims[3].known())
      return std::make_pair(out->shape.dims[2].value, out->shape.dims[3].value);
    if (!n.attr_ints("axes").empty()) return std::nullopt;
    auto constant = [&](size_t i) -> const Tensor* {
      auto it = n.has_input(i) ? graph_.initializers.find(n.inputs[i]) : graph_.initializers.end();
      return it != graph_.initializers.end() && it->second.numel() == 4 ? &it->second : nullptr;
    };
    if (const Tensor* sizes = constant(3)) return std::make_pair(sizes->ElementAsInt64(2), sizes->ElementAsInt64(3));
    if (const Tensor* scales = constant(2))  // ONNX: floor(input size * scale)
      return std::make_pair(static_cast<int64_t>(std::floor(h * scales->ElementAsDouble(2))),
                            static_cast<int64_t>(std::floor(w * scales->ElementAsDouble(3))));
    return std::nullopt;
  }

  // An UpsamplesPlainMap Resize whose output a convolution reads through a chain of sole
  // readers that run blocked (ReadsIntoConvolution): it reads its input converted into the
  // blocks (ToBlocked, on the smaller map) and writes blocked, so that the larger map is
  // never transposed — EfficientFormerV2's attention upsampling before its projection, a
  // decode head's Resizes before the Concat its fusing convolution reads.
  bool ConvertsPlainInput(const Node& n, const ValueReaders& readers) const {
    return UpsamplesPlainMap(n) && ReadsIntoConvolution(n.outputs[0], readers, 0);
  }

  // `value` is read by one node of this provider that runs blocked once its input is and
  // leads to a convolution the same way — a unary op, or a Concat on channels whose other
  // inputs are blocked or UpsamplesPlainMap Resizes read by it alone — or by that
  // convolution itself (as its data input).
  bool ReadsIntoConvolution(const std::string& value, const ValueReaders& readers, int depth) const {
    const int reader = readers.Sole(value);
    if (reader < 0 || depth > 8) return false;
    const Node& r = graph_.nodes[reader];
    if (r.provider != provider_ || r.outputs.size() != 1) return false;
    if (IsConvolution(r)) return r.inputs[0] == value && !r.has_attr("pool") && ConvWeights(r);
    const bool unary =
        (r.domain.empty() && kUnary.count(r.op_type)) || (r.domain == kTandemDomain && r.op_type == "Gelu");
    if (unary) return r.inputs[0] == value && ReadsIntoConvolution(r.outputs[0], readers, depth + 1);
    if (!r.domain.empty() || r.op_type != "Concat") return false;
    const int64_t axis = r.attr_int("axis", 1);
    if (axis != 1 && axis != -3) return false;
    for (const std::string& in : r.inputs) {
      if (in.empty()) return false;
      if (in == value || IsBlocked(in)) continue;
      const auto producer = producers_.find(in);
      if (producer == producers_.end() || readers.Sole(in) < 0 || !UpsamplesPlainMap(graph_.nodes[producer->second]))
        return false;
    }
    return ReadsIntoConvolution(r.outputs[0], readers, depth + 1);
  }

  // The 2-D float weights of a convolution not yet rewritten, one output, or null.
  const Tensor* ConvWeights(const Node& n) const {
    if (n.outputs.size() != 1 || !n.has_output(0) || !n.has_input(0) || !n.has_input(1) ||
        n.has_attr("channel_block"))
      return nullptr;
    auto w = graph_.initializers.find(n.inputs[1]);
    return w != graph_.initializers.end() && w->second.rank() == 4 && w->second.dtype() == DataType::kFloat &&
                   w->second.dim(0) > 0
               ? &w->second
               : nullptr;
  }

  bool ConvBlockable(const Node& n) const {
    const Tensor* w = ConvWeights(n);
    return w && graph_.ValueType(n.inputs[0]) == DataType::kFloat &&
           (block_ == kChannelsLast || w->dim(0) % block_ == 0);
  }

  // A 2-D QLinearConv that runs on oneDNN's int8 convolution (constant int8 weights of zero
  // point 0, a CPU with VNNI or AMX: quantized_ops.cc), whose kernels read and write
  // channels-last: with that layout only.
  bool QLinearConvBlockable(const Node& n) const {
    if (block_ != kChannelsLast || n.outputs.size() != 1 || !n.has_input(0) || !n.has_input(3) ||
        n.has_attr("channel_block") || !Int8DotProductsExact())
      return false;
    auto w = graph_.initializers.find(n.inputs[3]);
    if (w == graph_.initializers.end() || w->second.rank() != 4 || w->second.dtype() != DataType::kInt8) return false;
    if (!n.has_input(5)) return true;
    auto wz = graph_.initializers.find(n.inputs[5]);
    if (wz == graph_.initializers.end()) return false;
    for (int64_t i = 0; i < wz->second.numel(); ++i)
      if (wz->second.ElementAsInt64(i) != 0) return false;
    return true;
  }

  // A convolution that cannot write blocked (its output channels are not a multiple of
  // the block) but whose input arrives blocked: it reads that input as it is and writes
  // plain (blocked_output = 0), instead of a FromBlocked pass before it.
  bool ReadsBlockedOnly(const Node& n) const {
    return IsConvolution(n) && !n.has_attr("pool") && ConvWeights(n) && IsBlocked(n.inputs[0]);
  }

  // With the channels-last layout: the MaxPool that alone reads the output of `n` when `n`
  // is a network's first convolution (a plain float image of at most 4 channels, output
  // channels a multiple of image_block_), else null. oneDNN's jit kernels read such an
  // image as it is and write image_block_'s blocks (on oneDNN 2.6 only its reference
  // kernel writes channels-last from it), and the pool turns them into channels-last.
  const Node* ImageConvPool(const Node& n, const ValueReaders& readers) const {
    if (block_ != kChannelsLast || (image_block_ != 8 && image_block_ != 16) || !IsConvolution(n) ||
        n.has_attr("pool") || n.has_input(3) || n.attr_int("group", 1) != 1 || IsBlocked(n.inputs[0]) ||
        graph_.ValueType(n.inputs[0]) != DataType::kFloat)
      return nullptr;
    const Tensor* w = ConvWeights(n);
    if (!w || w->dim(1) > kImageChannels || w->dim(0) % image_block_ != 0) return nullptr;
    const int reader = readers.Sole(n.outputs[0]);
    if (reader < 0) return nullptr;
    const Node& pool = graph_.nodes[reader];
    const bool max_pool = pool.domain.empty() && pool.op_type == "MaxPool" && pool.provider == provider_ &&
                          pool.outputs.size() == 1 && pool.attr_int("storage_order", 0) == 0 &&
                          pool.attr_ints("kernel_shape").size() == 2;
    return max_pool ? &pool : nullptr;
  }

  // `n` (ImageConvPool) writes image_block_'s blocks; its pool reads them (Blockable).
  void BlockImageConv(Node& n, const Node& pool) {
    if (n.op_type == "Conv") {
      n.op_type = "FusedConv";
      n.domain = kTandemDomain;
    }
    n.attributes["channel_block"] = IntAttribute(image_block_);
    image_pools_.insert(&pool);
    WriteBlocked(n, image_block_);
  }

  bool TryBlock(Node& n, const ValueReaders& readers) {
    if (image_pools_.count(&n)) {  // reads its convolution's blocks, writes the graph's layout
      n.attributes["input_channel_block"] = IntAttribute(image_block_);
      n.attributes["channel_block"] = IntAttribute(block_);
      n.inputs[0] = BlockedName(n.inputs[0]);
      WriteBlocked(n, block_);
      return true;
    }
    if (ConvertsPlainInput(n, readers)) {
      const std::string plain = n.inputs[0];
      to_blocked_[&n] = plain;
      n.inputs[0] = ToBlockedName(plain);
      AddBlockedValueInfo(plain, n.inputs[0], block_);
      n.attributes["channel_block"] = IntAttribute(block_);
      WriteBlocked(n, block_);
      return true;
    }
    const bool writes_blocked = Blockable(n);
    if (!writes_blocked && !ReadsBlockedOnly(n)) return false;
    if (n.op_type == "Conv") {  // the FusedConv kernel is Conv's, plus the layout
      n.op_type = "FusedConv";
      n.domain = kTandemDomain;
    }
    if (IsSpatialMean(n)) {
      n.op_type = "GlobalAveragePool";
      n.inputs.resize(1);
      n.attributes.clear();
    }
    // The channel axis as stored: the blocks', or the channels' own with kChannelsLast.
    if (n.op_type == "Concat") n.attributes["axis"] = IntAttribute(block_ == kChannelsLast ? 4 : 1);
    n.attributes["channel_block"] = IntAttribute(block_);
    for (std::string& in : n.inputs)
      if (IsBlocked(in)) in = BlockedName(in);
    if (!writes_blocked) {
      n.attributes["blocked_output"] = IntAttribute(0);
      return true;
    }
    WriteBlocked(n, block_);
    return true;
  }

  // A blocked Resize that nothing reads blocked (only a plain reader or a graph output) would
  // convert its output back, the larger map when it upsamples: it reads its input plain
  // instead. Returns how many went back; a chain of them goes back from its end.
  int UnblockResizesReadPlain() {
    int unblocked = 0;
    for (bool changed = true; changed;) {
      changed = false;
      const ValueReaders readers(graph_);
      for (Node& n : graph_.nodes) {
        if (!n.domain.empty() || n.op_type != "Resize" || !n.has_attr("channel_block") ||
            !plain_of_.count(n.outputs[0]) || !readers.nodes(n.outputs[0]).empty())
          continue;
        const std::string plain = plain_of_.at(n.outputs[0]);
        plain_of_.erase(n.outputs[0]);
        block_of_.erase(plain);
        graph_.value_info.erase(n.outputs[0]);
        n.outputs[0] = plain;
        auto converted = to_blocked_.find(&n);
        if (converted != to_blocked_.end()) {  // reads its plain input again, no ToBlocked
          const std::string plain_input = converted->second;
          to_blocked_.erase(converted);
          bool still_read = false;  // by another Resize converting the same value
          for (const auto& other : to_blocked_) still_read |= other.second == plain_input;
          if (!still_read) graph_.value_info.erase(n.inputs[0]);
          n.inputs[0] = plain_input;
        } else {
          n.inputs[0] = plain_of_.at(n.inputs[0]);
        }
        n.attributes.erase("channel_block");
        ++unblocked;
        changed = true;
      }
    }
    return unblocked;
  }

  // Renames the output of `n` to its blocked name, stored with `block`.
  void WriteBlocked(Node& n, int block) {
    const std::string out = n.outputs[0];
    block_of_[out] = block;
    plain_of_[BlockedName(out)] = out;
    n.outputs[0] = BlockedName(out);
    AddBlockedValueInfo(out, n.outputs[0], block);
  }

  // The value info of `blocked`, plain value `plain` stored with `block`.
  void AddBlockedValueInfo(const std::string& plain, const std::string& blocked, int block) {
    const ValueInfo* vi = graph_.FindValueInfo(plain);
    if (!vi) return;
    ValueInfo b = *vi;
    b.name = blocked;
    const auto& d = vi->shape.dims;
    if (vi->shape.rank_known && d.size() == 4 && d[1].known()) {
      const bool last = block == kChannelsLast;
      b.shape.dims = {d[0], Dim{last ? 1 : d[1].value / block, ""}, d[2], d[3], Dim{last ? d[1].value : block, ""}};
    } else {
      b.shape = Shape::Unknown();
    }
    graph_.value_info[b.name] = b;
  }

  // After the rewrite, whatever still reads an original name reads it plain.
  void InsertFromBlocked() {
    const ValueReaders readers(graph_);
    std::vector<Node> nodes;
    nodes.reserve(graph_.nodes.size() + block_of_.size());
    std::set<std::string> converted_values;  // one ToBlocked per value, before its first reader
    for (Node& n : graph_.nodes) {
      auto converted = to_blocked_.find(&n);
      if (converted != to_blocked_.end() && converted_values.insert(converted->second).second) {
        Node t;
        t.name = converted->second + "/to_blocked";
        t.op_type = "ToBlocked";
        t.domain = kTandemDomain;
        t.inputs = {converted->second};
        t.outputs = {n.inputs[0]};
        t.provider = provider_;
        t.attributes["channel_block"] = IntAttribute(block_);
        nodes.push_back(std::move(t));
      }
      auto blocked = n.outputs.empty() ? plain_of_.end() : plain_of_.find(n.outputs[0]);
      nodes.push_back(std::move(n));
      if (blocked == plain_of_.end()) continue;
      const std::string& plain = blocked->second;
      if (readers.nodes(plain).empty() && !readers.pinned(plain)) continue;
      Node f;
      f.name = plain + "/from_blocked";
      f.op_type = "FromBlocked";
      f.domain = kTandemDomain;
      f.inputs = {blocked->first};
      f.outputs = {plain};
      f.provider = provider_;
      f.attributes["channel_block"] = IntAttribute(block_of_.at(plain));
      nodes.push_back(std::move(f));
    }
    graph_.nodes = std::move(nodes);
    if (!graph_.opsets.count(kTandemDomain)) graph_.opsets[kTandemDomain] = 1;
  }

  Graph& graph_;
  const std::string provider_;
  const int block_;
  const int image_block_;
  std::map<std::string, int> block_of_;          // original names of blocked values -> their block
  std::set<const Node*> image_pools_;            // the MaxPools after ImageConvPool convolutions
  std::map<std::string, std::string> plain_of_;  // BlockedName(value) -> value
  std::map<const Node*, std::string> to_blocked_;  // ConvertsPlainInput Resizes -> the plain value they convert
  std::map<std::string, size_t> producers_;        // value -> the index of the node writing it
};

}  // namespace

int UseChannelBlockedLayout(Graph& graph, const std::string& provider, int block, int image_block) {
  if ((block <= 1 && block != kChannelsLast) || graph.HasGradientNodes()) return 0;
  return BlockedLayoutPass(graph, provider, block, image_block).Run();
}

}  // namespace tandem::cpu
