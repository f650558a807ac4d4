#include "optimizer/gelu_fusion.h"

#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/passes.h"
#include "graph/value_readers.h"
#include "optimizer/onnx_rewrites/rewrite_util.h"

namespace tandem {
namespace {

const std::set<std::string> kElementwise = {"Add", "Sub", "Mul", "Div", "Pow", "Neg", "Tanh", "Erf"};

double GeluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

class GeluMatcher {
 public:
  explicit GeluMatcher(const Graph& graph) : graph_(graph), readers_(graph), producer_(Producers(graph)) {}

  struct Match {
    std::set<size_t> nodes;  // the subgraph, its last node producing `y`
    std::string x, y;
    const char* approximate;
  };

  // The largest GELU around the Erf or Tanh node `anchor`, or nullopt.
  std::optional<Match> Around(size_t anchor) {
    const Node& a = graph_.nodes[anchor];
    if (!a.domain.empty() || (a.op_type != "Erf" && a.op_type != "Tanh") || a.inputs.size() != 1 ||
        a.outputs.size() != 1)
      return std::nullopt;
    x_.clear();
    nodes_ = {anchor};
    if (!Gather(a.inputs[0]) || x_.empty() || graph_.ValueType(x_) != DataType::kFloat) return std::nullopt;
    std::optional<Match> best;
    for (std::string y = a.outputs[0];;) {
      const int r = readers_.Sole(y);
      if (r < 0 || !Eligible(graph_.nodes[r]) || nodes_.count(r)) break;
      const Node& next = graph_.nodes[r];
      bool ok = true;
      for (const std::string& in : next.inputs)
        if (in != y && !Gather(in)) ok = false;
      if (!ok) break;
      nodes_.insert(r);
      y = next.outputs[0];
      if (const char* form = Evaluates(y)) best = Match{nodes_, x_, y, form};
    }
    return best;
  }

 private:
  bool Eligible(const Node& n) const {
    return n.domain.empty() && kElementwise.count(n.op_type) && n.outputs.size() == 1 && !n.inputs.empty() &&
           n.inputs.size() <= 2;
  }

  const Tensor* ScalarConstant(const std::string& v) const {
    const Tensor* c = rewrite::Constant(graph_, v);
    return c && c->numel() == 1 && (c->dtype() == DataType::kFloat || c->dtype() == DataType::kDouble) ? c
                                                                                                     : nullptr;
  }

  // Adds the nodes computing `v` from x (set on the first leaf: a value with other readers
  // or from any other node); false when `v` needs another leaf.
  bool Gather(const std::string& v) {
    if (v.empty()) return false;
    if (v == x_ || ScalarConstant(v)) return true;
    auto p = producer_.find(v);
    const bool inner = p != producer_.end() && readers_.Sole(v) >= 0 && Eligible(graph_.nodes[p->second]);
    if (!inner) {
      if (!x_.empty()) return false;
      x_ = v;
      return true;
    }
    if (nodes_.count(p->second)) return true;
    nodes_.insert(p->second);
    for (const std::string& in : graph_.nodes[p->second].inputs)
      if (!Gather(in)) return false;
    return true;
  }

  double Scalar(const Tensor& t) const {
    return t.dtype() == DataType::kFloat ? t.data<float>()[0] : t.data<double>()[0];
  }

  // The subgraph's value of `y` at x = `xv`, in double (the nodes run in graph order).
  double Value(const std::string& y, double xv) const {
    std::map<std::string, double> v = {{x_, xv}};
    auto in = [&](const std::string& name) {
      if (const Tensor* c = ScalarConstant(name)) return Scalar(*c);
      auto it = v.find(name);
      return it != v.end() ? it->second : std::nan("");  // (not reached on a sorted graph)
    };
    for (size_t k : nodes_) {  // std::set: ascending, and graph order is topological
      const Node& n = graph_.nodes[k];
      const double a = in(n.inputs[0]);
      const double b = n.inputs.size() > 1 ? in(n.inputs[1]) : 0.0;
      double r = 0;
      if (n.op_type == "Add") r = a + b;
      else if (n.op_type == "Sub") r = a - b;
      else if (n.op_type == "Mul") r = a * b;
      else if (n.op_type == "Div") r = a / b;
      else if (n.op_type == "Pow") r = std::pow(a, b);
      else if (n.op_type == "Neg") r = -a;
      else if (n.op_type == "Tanh") r = std::tanh(a);
      else r = std::erf(a);
      v[n.outputs[0]] = r;
    }
    auto it = v.find(y);
    return it != v.end() ? it->second : std::nan("");
  }

  // Whether every constant broadcasts within x's shape (rank 0, or at most x's known rank),
  // so that y has x's shape, as the Gelu replacing the subgraph will.
  bool ConstantsFit() const {
    const ValueInfo* vi = graph_.FindValueInfo(x_);
    const int64_t rank = vi && vi->shape.rank_known ? static_cast<int64_t>(vi->shape.dims.size()) : 0;
    for (size_t k : nodes_)
      for (const std::string& in : graph_.nodes[k].inputs)
        if (const Tensor* c = ScalarConstant(in); c && c->rank() > rank) return false;
    return true;
  }

  // "none" or "tanh" when `y` is that GELU of x, else null.
  const char* Evaluates(const std::string& y) const {
    if (!ConstantsFit()) return nullptr;
    for (const auto& [form, gelu] : {std::pair{"none", &GeluErf}, std::pair{"tanh", &GeluTanh}}) {
      bool same = true;
      for (int i = 0; i <= 24 && same; ++i) {
        const double xv = -6.0 + 0.5 * i;
        const double want = gelu(xv), got = Value(y, xv);
        same = std::fabs(got - want) <= 1e-6 * 6.0;  // 6: the result's scale on [-6, 6]
      }
      if (same) return form;
    }
    return nullptr;
  }

  const Graph& graph_;
  const ValueReaders readers_;
  const std::map<std::string, size_t> producer_;
  std::string x_;
  std::set<size_t> nodes_;
};

}  // namespace

int FuseGelu(Graph& graph) {
  // The matcher evaluates and replaces nodes in graph order, which must be topological.
  if (graph.HasGradientNodes() || !graph.SortTopologically().ok()) return 0;
  std::vector<GeluMatcher::Match> matches;
  {
    GeluMatcher matcher(graph);
    std::set<size_t> used;
    for (size_t k = 0; k < graph.nodes.size(); ++k) {
      if (used.count(k)) continue;
      auto m = matcher.Around(k);
      if (!m) continue;
      bool overlaps = false;
      for (size_t n : m->nodes) overlaps |= used.count(n) != 0;
      if (overlaps) continue;
      used.insert(m->nodes.begin(), m->nodes.end());
      matches.push_back(std::move(*m));
    }
  }
  if (matches.empty()) return 0;
  std::set<size_t> removed;
  for (const auto& m : matches) {  // the Gelu takes the place of the match's last node
    const size_t last = *m.nodes.rbegin();
    Node g;
    g.name = graph.nodes[last].name.empty() ? m.y + "/gelu" : graph.nodes[last].name + "/gelu";
    g.op_type = "Gelu";
    g.domain = kTandemDomain;
    g.inputs = {m.x};
    g.outputs = {m.y};
    g.attributes["approximate"] = StringAttribute(m.approximate);
    graph.nodes[last] = std::move(g);
    removed.insert(m.nodes.begin(), std::prev(m.nodes.end()));
  }
  RemoveNodes(graph, removed);
  if (!graph.opsets.count(kTandemDomain)) graph.opsets[kTandemDomain] = 1;
  return static_cast<int>(matches.size());
}

}  // namespace tandem
