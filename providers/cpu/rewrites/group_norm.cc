#include "providers/cpu/rewrites/group_norm.h"

#include <optional>
#include <set>
#include <vector>

#include "graph/passes.h"
#include "graph/static_shape.h"
#include "graph/value_readers.h"
#include "providers/cpu/rewrites/float_constant.h"

namespace tandem::cpu {
namespace {

// Whether the constant holds `v` throughout.
bool AllEqual(const Tensor& t, float v) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.data<float>()[i] != v) return false;
  return true;
}

// The C values of a float constant that broadcasts per channel onto x of `rank`
// ([C, 1, ...], [1, C, 1, ...] or one value), else nullopt.
std::optional<std::vector<float>> PerChannel(const Tensor& t, size_t rank, int64_t C) {
  if (t.rank() > static_cast<int>(rank)) return std::nullopt;
  const size_t lead = rank - static_cast<size_t>(t.rank());  // t's dims right-aligned to x's
  for (int d = 0; d < t.rank(); ++d) {
    const size_t axis = lead + static_cast<size_t>(d);
    if (t.dim(d) != 1 && !(axis == 1 && t.dim(d) == C)) return std::nullopt;
  }
  std::vector<float> v(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) v[c] = t.data<float>()[t.numel() == 1 ? 0 : c];
  return v;
}

class GroupNormFusion {
 public:
  GroupNormFusion(Graph& graph, const std::string& provider)
      : g_(graph), provider_(provider), readers_(graph), producers_(Producers(graph)) {}

  int Run() {
    for (size_t k = 0; k < g_.nodes.size(); ++k)
      if (IsOp(g_.nodes[k], "InstanceNormalization")) TryAt(k);
    if (removed_.empty()) return 0;
    for (auto& [index, node] : fused_) g_.nodes[index] = std::move(node);
    RemoveNodes(g_, removed_);
    if (!g_.opsets.count(kTandemDomain)) g_.opsets[kTandemDomain] = 1;
    return static_cast<int>(fused_.size());
  }

 private:
  bool IsOp(const Node& n, const char* op) const {
    return n.domain.empty() && n.op_type == op && n.provider == provider_ && n.outputs.size() == 1;
  }

  // The node that alone reads `value` when it is `op` on this provider, else -1.
  int SoleReader(const std::string& value, const char* op) const {
    const int r = readers_.Sole(value);
    return r >= 0 && IsOp(g_.nodes[static_cast<size_t>(r)], op) ? r : -1;
  }

  // The other input of a binary node reading `value`, or null.
  static const std::string* OtherInput(const Node& n, const std::string& value) {
    if (n.inputs.size() != 2) return nullptr;
    const std::string& other = n.inputs[0] == value ? n.inputs[1] : n.inputs[0];
    return other == value ? nullptr : &other;
  }

  // The groups of Reshape `split` of x (of `x_dims`) to [N, groups, ...]: from the static
  // shapes, or from its constant target [0 or N, groups, -1] (the exporters' own), else 0.
  int64_t SplitGroups(const Node& split, const std::vector<Dim>& x_dims) const {
    const std::optional<Dims> xd = StaticDims(g_, split.inputs[0]), gd = StaticDims(g_, split.outputs[0]);
    if (xd && gd && gd->size() >= 3 && (*gd)[0] == (*xd)[0]) return (*gd)[1];
    auto t = split.inputs.size() == 2 ? g_.initializers.find(split.inputs[1]) : g_.initializers.end();
    if (t == g_.initializers.end() || t->second.dtype() != DataType::kInt64 || t->second.numel() != 3 ||
        split.attr_int("allowzero", 0) != 0 || x_dims.size() < 3)
      return 0;
    const int64_t* v = t->second.data<int64_t>();
    const bool batch = v[0] == 0 || (x_dims[0].known() && v[0] == x_dims[0].value);
    return batch && v[1] > 0 && v[2] == -1 ? v[1] : 0;
  }

  // Whether Reshape `merge` gives back x's shape: by the static shapes, or its target is
  // Shape(x).
  bool MergesBack(const Node& merge, const std::string& x) const {
    const std::optional<Dims> xd = StaticDims(g_, x);
    if (xd && StaticDims(g_, merge.outputs[0]) == xd) return true;
    auto p = merge.inputs.size() == 2 ? producers_.find(merge.inputs[1]) : producers_.end();
    if (p == producers_.end()) return false;
    const Node& shape = g_.nodes[p->second];
    return IsOp(shape, "Shape") && shape.inputs.size() == 1 && shape.inputs[0] == x && !shape.has_attr("end") &&
           shape.attr_int("start", 0) == 0;
  }

  void TryAt(size_t k) {
    const Node& norm = g_.nodes[k];
    if (norm.inputs.size() != 3 || removed_.count(k)) return;
    const Tensor* unit = FloatConstant(g_, norm.inputs[1]);
    const Tensor* zero = FloatConstant(g_, norm.inputs[2]);
    auto p = producers_.find(norm.inputs[0]);
    if (!unit || !zero || !AllEqual(*unit, 1.f) || !AllEqual(*zero, 0.f) || p == producers_.end()) return;
    const Node& split = g_.nodes[p->second];
    if (!IsOp(split, "Reshape") || readers_.Sole(norm.inputs[0]) != static_cast<int>(k)) return;
    const std::string& x = split.inputs[0];
    const ValueInfo* xi = g_.FindValueInfo(x);
    if (!xi || !xi->shape.rank_known || xi->shape.dims.size() < 3 || xi->dtype != DataType::kFloat) return;
    const size_t rank = xi->shape.dims.size();
    const int64_t groups = SplitGroups(split, xi->shape.dims);
    const int merge = SoleReader(norm.outputs[0], "Reshape");
    if (groups <= 0 || unit->numel() != groups || zero->numel() != groups || merge < 0 ||
        !MergesBack(g_.nodes[merge], x))
      return;
    // The channels: x's dim 1 (where inference left it open, a one-channel x could broadcast
    // against a Mul of C values, which the fused node would not).
    if (!xi->shape.dims[1].known()) return;
    const int64_t C = xi->shape.dims[1].value;
    std::vector<std::pair<int, std::vector<float>>> affine;  // the Mul's and the Add's node and values
    std::string value = g_.nodes[merge].outputs[0];
    for (const char* op : {"Mul", "Add"}) {  // each optional
      const int r = SoleReader(value, op);
      const std::string* other = r >= 0 ? OtherInput(g_.nodes[r], value) : nullptr;
      const Tensor* t = other ? FloatConstant(g_, *other) : nullptr;
      const std::optional<std::vector<float>> v = t ? PerChannel(*t, rank, C) : std::nullopt;
      affine.emplace_back(v ? r : -1, v.value_or(std::vector<float>()));
      if (v) value = g_.nodes[r].outputs[0];
    }
    if (C <= 0 || C % groups != 0) return;
    std::vector<float> weight(static_cast<size_t>(C), 1.f), bias(static_cast<size_t>(C), 0.f);
    std::set<size_t> nodes = {p->second, k, static_cast<size_t>(merge)};
    if (g_.nodes[merge].inputs.size() == 2) {  // a Shape(x) target nothing else reads goes too
      const std::string& target = g_.nodes[merge].inputs[1];
      auto t = producers_.find(target);
      if (t != producers_.end() && IsOp(g_.nodes[t->second], "Shape") && readers_.Sole(target) == merge)
        nodes.insert(t->second);
    }
    for (size_t i = 0; i < 2; ++i) {
      if (affine[i].first < 0) continue;
      (i == 0 ? weight : bias) = affine[i].second;
      nodes.insert(static_cast<size_t>(affine[i].first));
    }
    const int swish = SwishAfter(value, nodes);
    Node fused;
    fused.name = (split.name.empty() ? x : split.name) + "+group_norm" + (swish >= 0 ? "+swish" : "");
    fused.op_type = "FusedGroupNorm";
    fused.domain = kTandemDomain;
    fused.provider = provider_;
    const std::string base = split.name.empty() ? norm.outputs[0] : split.name;
    const std::string w_name = UnusedValueName(g_, base + ".group_norm_weight");
    g_.initializers[w_name] = Tensor::FromVector<float>(weight, {C});
    g_.constants.insert(w_name);
    const std::string b_name = UnusedValueName(g_, base + ".group_norm_bias");
    g_.initializers[b_name] = Tensor::FromVector<float>(bias, {C});
    g_.constants.insert(b_name);
    fused.inputs = {x, w_name, b_name};
    fused.outputs = {swish >= 0 ? g_.nodes[swish].outputs[0] : value};
    fused.attributes["num_groups"] = IntAttribute(groups);
    fused.attributes["epsilon"] = FloatAttribute(norm.attr_float("epsilon", 1e-5f));
    if (swish >= 0) fused.attributes["activation"] = StringAttribute("Swish");
    const size_t last = *nodes.rbegin();  // every reader of the result comes after it
    nodes.erase(last);
    removed_.insert(nodes.begin(), nodes.end());
    fused_.emplace_back(last, std::move(fused));
  }

  // With `value` read only by Sigmoid(value) and Mul(value, that Sigmoid) (SiLU), the Mul's
  // index (both added to `nodes`), else -1.
  int SwishAfter(const std::string& value, std::set<size_t>& nodes) const {
    const std::vector<size_t>& r = readers_.nodes(value);
    if (r.size() != 2 || readers_.pinned(value)) return -1;
    for (int first = 0; first < 2; ++first) {
      const size_t sig = r[first], mul = r[1 - first];
      if (!IsOp(g_.nodes[sig], "Sigmoid") || !IsOp(g_.nodes[mul], "Mul")) continue;
      const std::string* other = OtherInput(g_.nodes[mul], value);
      if (!other || *other != g_.nodes[sig].outputs[0] || readers_.Sole(*other) != static_cast<int>(mul)) continue;
      nodes.insert(sig);
      nodes.insert(mul);
      return static_cast<int>(mul);
    }
    return -1;
  }

  Graph& g_;
  const std::string provider_;
  const ValueReaders readers_;
  const std::map<std::string, size_t> producers_;
  std::set<size_t> removed_;
  std::vector<std::pair<size_t, Node>> fused_;  // node index it replaces, the fused node
};

}  // namespace

int FuseGroupNorm(Graph& graph, const std::string& provider) {
  if (graph.HasGradientNodes()) return 0;
  return GroupNormFusion(graph, provider).Run();
}

}  // namespace tandem::cpu
