#include "ops/attention_subgraph.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "graph/passes.h"
#include "graph/value_readers.h"

namespace tandem {
namespace {

class Matcher {
 public:
  Matcher(const Graph& g, const std::string& provider, bool heads_in_place)
      : g_(g), readers_(g), provider_(provider), heads_in_place_(heads_in_place), producer_(Producers(g)) {}

  // What replaces the MatMul(P, V) that reads the Softmax at `softmax`, or nullopt.
  struct Fusion {
    size_t pv = 0;
    std::set<size_t> removed;
    std::string q, kt, v, mask;
    float scale = 1.f;
    bool nan_rows_to_zero = false;
    bool heads_interleaved = false;  // q, kt, v: the values before the heads' Transposes
    // Shape nodes that read an absorbed Transpose's output: they read its input instead,
    // a Gather putting their result back in the Transpose's order.
    struct ShapeReader {
      size_t node;
      std::string source;
      std::vector<int64_t> perm;
    };
    std::vector<ShapeReader> shape_readers;
  };
  std::optional<Fusion> Match(size_t softmax) const {
    const Node& sm = g_.nodes[softmax];
    if (!Is(sm, "Softmax", 1) || !IsLastAxis(sm)) return std::nullopt;
    Fusion f;
    f.removed.insert(softmax);
    // Scores side: [Add(scores, mask)], scalar Muls/Divs, MatMul.
    const std::string& x = sm.inputs[0];
    std::optional<size_t> add = SoleProducer(x, "Add", 2);
    bool scores_found = false;
    if (add) {
      const Node& a = g_.nodes[*add];
      for (int side = 0; side < 2 && !scores_found; ++side) {
        const std::string &s = a.inputs[side], &m = a.inputs[1 - side];
        Fusion tried = f;
        tried.removed.insert(*add);
        if (s == m || g_.ValueType(m) != DataType::kFloat || !ScoresFrom(s, tried))
          continue;
        tried.mask = m;
        f = tried;
        scores_found = true;
      }
    } else {
      scores_found = ScoresFrom(x, f);
    }
    if (!scores_found) return std::nullopt;
    // Output side: MatMul(P, V), or MatMul(Where(IsNaN(P), 0, P), V).
    const std::string& p = sm.outputs[0];
    std::string probs = p;
    if (readers_.Sole(p) < 0) {
      const std::vector<size_t>& r = readers_.nodes(p);
      if (r.size() != 2 || readers_.pinned(p)) return std::nullopt;
      const size_t isnan = g_.nodes[r[0]].op_type == "IsNaN" ? r[0] : r[1], where = isnan == r[0] ? r[1] : r[0];
      const Node &n = g_.nodes[isnan], &w = g_.nodes[where];
      float zero = 1.f;
      if (!Is(n, "IsNaN", 1, DataType::kBool) || !Is(w, "Where", 3) ||
          readers_.Sole(n.outputs[0]) != static_cast<int>(where) || w.inputs[0] != n.outputs[0] ||
          !ScalarConstant(w.inputs[1], &zero) || zero != 0.f || w.inputs[2] != p)
        return std::nullopt;
      f.removed.insert({isnan, where});
      f.nan_rows_to_zero = true;
      probs = w.outputs[0];
    }
    const int pv = readers_.Sole(probs);
    if (pv < 0) return std::nullopt;
    const Node& mm = g_.nodes[static_cast<size_t>(pv)];
    if (!Is(mm, "MatMul", 2) || mm.inputs[0] != probs || mm.inputs[1] == probs) return std::nullopt;
    f.pv = static_cast<size_t>(pv);
    f.v = mm.inputs[1];
    for (const std::string* operand : {&f.q, &f.kt, &f.v})
      if (!MatrixOperand(*operand)) return std::nullopt;
    if (heads_in_place_) AbsorbHeadTransposes(f);
    return f;
  }

 private:
  bool Is(const Node& n, const char* op, size_t inputs, DataType out = DataType::kFloat) const {
    return n.provider == provider_ && n.domain.empty() && n.op_type == op && n.inputs.size() == inputs &&
           n.outputs.size() == 1 && g_.ValueType(n.outputs[0]) == out;
  }

  // Softmax over the last axis (opset 13 on: `axis`, default -1; before: the rows of the
  // input coerced to 2-D at `axis`, default 1, which is the last axis when axis = rank - 1).
  bool IsLastAxis(const Node& sm) const {
    const bool old = g_.opset("") < 13;
    const int64_t axis = sm.attr_int("axis", old ? 1 : -1);
    const ValueInfo* info = g_.FindValueInfo(sm.inputs[0]);
    const int64_t rank = info && info->shape.rank_known ? static_cast<int64_t>(info->shape.dims.size()) : -1;
    return (axis == -1 && !old) || (rank > 0 && axis == rank - 1);
  }

  // The node writing `value` when it is `op` on the provider and `value` has no other reader.
  std::optional<size_t> SoleProducer(const std::string& value, const char* op, size_t inputs) const {
    auto it = producer_.find(value);
    if (it == producer_.end() || readers_.Sole(value) < 0 || !Is(g_.nodes[it->second], op, inputs))
      return std::nullopt;
    return it->second;
  }

  bool ScalarConstant(const std::string& name, float* value) const {
    auto it = g_.initializers.find(name);
    // Rank 2 at most: Q, Kt, the scores and P have rank 2 or more, so the constant cannot
    // raise the rank of what it multiplies (which the fused node would not follow).
    if (it == g_.initializers.end() || it->second.dtype() != DataType::kFloat || it->second.numel() != 1 ||
        it->second.rank() > 2)
      return false;
    *value = it->second.data<float>()[0];
    return true;
  }

  // Follows `value` up through Muls and Divs by scalar constants (each folded into
  // f.scale), each the sole reader of what it writes; returns where the chain starts.
  std::string StripScalarFactors(std::string value, Fusion& f) const {
    for (;;) {
      float c = 0.f;
      if (auto mul = SoleProducer(value, "Mul", 2)) {
        const Node& n = g_.nodes[*mul];
        const int k = ScalarConstant(n.inputs[1], &c) ? 1 : ScalarConstant(n.inputs[0], &c) ? 0 : -1;
        if (k < 0) return value;
        f.scale *= c;
        f.removed.insert(*mul);
        value = n.inputs[1 - k];
      } else if (auto div = SoleProducer(value, "Div", 2)) {
        const Node& n = g_.nodes[*div];
        if (!ScalarConstant(n.inputs[1], &c)) return value;
        f.scale /= c;
        f.removed.insert(*div);
        value = n.inputs[0];
      } else {
        return value;
      }
    }
  }

  // `scores` = c * MatMul(a * Q, b * Kt): fills Q, Kt and the scale.
  bool ScoresFrom(const std::string& scores, Fusion& f) const {
    const std::optional<size_t> qk = SoleProducer(StripScalarFactors(scores, f), "MatMul", 2);
    if (!qk) return false;
    f.removed.insert(*qk);
    const Node& mm = g_.nodes[*qk];
    f.q = StripScalarFactors(mm.inputs[0], f);
    f.kt = StripScalarFactors(mm.inputs[1], f);
    return true;
  }

  // Q = Transpose(Qh, [0, 2, 1, 3]), Kt = Transpose(Kh, [0, 2, 3, 1]) and V = Transpose(Vh,
  // [0, 2, 1, 3]) (the heads split from [B, S, H, D]), each read once by the attention and
  // otherwise only by Shape nodes (exporters take sizes from them): the fused node reads Qh,
  // Kh and Vh in place instead (heads_interleaved), so neither pass of a training step copies
  // the heads apart or back.
  void AbsorbHeadTransposes(Fusion& f) const {
    const std::vector<int64_t> split = {0, 2, 1, 3}, split_keys = {0, 2, 3, 1};
    const std::pair<std::string*, const std::vector<int64_t>*> operands[] = {
        {&f.q, &split}, {&f.kt, &split_keys}, {&f.v, &split}};
    std::vector<size_t> transposes;
    std::vector<Fusion::ShapeReader> shapes;
    for (const auto& [value, perm] : operands) {
      auto it = producer_.find(*value);
      if (it == producer_.end() || readers_.pinned(*value)) return;
      const Node& t = g_.nodes[it->second];
      if (!Is(t, "Transpose", 1) || !t.has_attr("perm") || t.attr_ints("perm") != *perm) return;
      int fused_reads = 0;
      for (size_t r : readers_.nodes(*value)) {
        const Node& n = g_.nodes[r];
        if (f.removed.count(r) || r == f.pv) {
          ++fused_reads;
        } else if (n.provider == provider_ && n.domain.empty() && n.op_type == "Shape" && n.outputs.size() == 1 &&
                   !n.has_attr("start") && !n.has_attr("end")) {
          shapes.push_back({r, t.inputs[0], *perm});
        } else {
          return;
        }
      }
      if (fused_reads != 1) return;
      transposes.push_back(it->second);
    }
    for (size_t i = 0; i < transposes.size(); ++i) {
      *operands[i].first = g_.nodes[transposes[i]].inputs[0];
      f.removed.insert(transposes[i]);
    }
    f.shape_readers = std::move(shapes);
    f.heads_interleaved = true;
  }

  // A float value of rank 2 or more: as shape inference recorded it, or, where it could not
  // (a Reshape to a shape computed from Shape nodes, before the heads' Transpose), by the
  // perm of the Transpose that writes it.
  bool MatrixOperand(const std::string& value) const {
    const ValueInfo* info = g_.FindValueInfo(value);
    if (!info || info->dtype != DataType::kFloat) return false;
    if (info->shape.rank_known) return info->shape.dims.size() >= 2;
    auto it = producer_.find(value);
    if (it == producer_.end()) return false;
    const Node& n = g_.nodes[it->second];
    return n.domain.empty() && n.op_type == "Transpose" && n.has_attr("perm") && n.attr_ints("perm").size() >= 2;
  }

  const Graph& g_;
  const ValueReaders readers_;
  const std::string& provider_;
  const bool heads_in_place_;
  const std::map<std::string, size_t> producer_;
};

}  // namespace

int FuseAttentionSubgraphs(Graph& graph, const std::string& provider, bool heads_in_place) {
  std::vector<Matcher::Fusion> fusions;
  {
    const Matcher matcher(graph, provider, heads_in_place);
    std::set<size_t> taken;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      auto f = matcher.Match(i);
      if (!f || taken.count(f->pv)) continue;
      bool overlaps = false;
      for (size_t k : f->removed) overlaps |= taken.count(k) != 0;
      if (overlaps) continue;
      taken.insert(f->removed.begin(), f->removed.end());
      taken.insert(f->pv);
      fusions.push_back(std::move(*f));
    }
  }
  if (fusions.empty()) return 0;
  std::set<size_t> removed;
  std::map<size_t, Node> gather_after;  // a Shape node's index -> the Gather that reorders its result
  for (const Matcher::Fusion& f : fusions) {
    for (const Matcher::Fusion::ShapeReader& r : f.shape_readers) {
      Node& shape = graph.nodes[r.node];
      const std::string dims = shape.outputs[0], perm = dims + "/heads_perm";
      shape.inputs[0] = r.source;
      shape.outputs[0] = dims + "/heads_in_place";
      graph.initializers[perm] = Tensor::FromVector<int64_t>(r.perm, {static_cast<int64_t>(r.perm.size())});
      Node gather;
      gather.name = shape.name + "/heads_perm";
      gather.op_type = "Gather";
      gather.provider = shape.provider;
      gather.inputs = {shape.outputs[0], perm};
      gather.outputs = {dims};
      gather.attributes["axis"] = IntAttribute(0);
      gather_after[r.node] = std::move(gather);
    }
    Node& n = graph.nodes[f.pv];
    n.domain = kTandemDomain;
    n.op_type = "FusedAttention";
    n.inputs = {f.q, f.kt, f.v};
    if (!f.mask.empty()) n.inputs.push_back(f.mask);
    n.attributes.clear();
    n.attributes["scale"] = FloatAttribute(f.scale);
    if (f.nan_rows_to_zero) n.attributes["nan_rows_to_zero"] = IntAttribute(1);
    if (f.heads_interleaved) n.attributes["heads_interleaved"] = IntAttribute(1);
    n.name = "attention(" + (n.name.empty() ? n.outputs[0] : n.name) + ")";
    removed.insert(f.removed.begin(), f.removed.end());
  }
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size() - removed.size() + gather_after.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!removed.count(i)) kept.push_back(std::move(graph.nodes[i]));
    if (auto g = gather_after.find(i); g != gather_after.end()) kept.push_back(std::move(g->second));
  }
  graph.nodes = std::move(kept);
  return static_cast<int>(fusions.size());
}

}  // namespace tandem
