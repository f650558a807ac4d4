// Kernels of the ai.onnx.ml domain (scikit-learn exports):
// - Binarizer (1): Y = X > threshold ? 1 : 0, in X's type.
// - ArrayFeatureExtractor (1): Z = X[..., indices] along the last axis; a 1-D X gives
//   [1, len(indices)] (as onnxruntime and onnx's reference do).
// - LabelEncoder (2, 4): maps each element of X through keys -> values (keys_strings /
//   keys_int64s / keys_floats / keys_tensor to the values_* counterpart); missing keys
//   take the default (default_tensor, or default_string / default_int64 / default_float,
//   whose schema defaults are "_Unused", -1 and -0.0).
// - TreeEnsemble (5): decision trees over the features of X [N, F]; each tree's leaf adds
//   its weight to its target, aggregated by SUM / AVERAGE / MIN / MAX into [N, n_targets],
//   then post_transform NONE, SOFTMAX or LOGISTIC (SOFTMAX_ZERO and PROBIT are refused).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

constexpr char kMl[] = "ai.onnx.ml";

class Binarizer : public Kernel {
 public:
  explicit Binarizer(const KernelInfo& info) : threshold_(info.node.attr_float("threshold", 0.f)) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), x.dims());
    const bool ok = VisitNumericType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t i = 0; i < x.numel(); ++i)
        y.data<T>()[i] = static_cast<T>(x.ElementAsDouble(i) > threshold_ ? 1.f : 0.f);
    });
    return ok ? absl::OkStatus() : absl::InvalidArgumentError("Binarizer takes numbers");
  }

 private:
  double threshold_;
};

// Copies element `from` of `src` to element `to` of `dst` (same type, strings included).
void CopyElement(const Tensor& src, int64_t from, Tensor& dst, int64_t to) {
  if (src.dtype() == DataType::kString) {
    dst.data<std::string>()[to] = src.data<std::string>()[from];
    return;
  }
  const size_t size = SizeOf(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + to * size, static_cast<const char*>(src.raw()) + from * size, size);
}

class ArrayFeatureExtractor : public Kernel {
 public:
  explicit ArrayFeatureExtractor(const KernelInfo&) {}
  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const Tensor& indices = *ctx.input(1);
    if (x.rank() < 1) return absl::InvalidArgumentError("X must have rank >= 1");
    const int64_t last = x.dim(-1), count = indices.numel();
    Dims out = x.rank() == 1 ? Dims{1, count} : x.dims();
    out.back() = count;
    for (int64_t k = 0; k < count; ++k) {
      const int64_t i = indices.ElementAsInt64(k);
      if (i < 0 || i >= last)
        return absl::InvalidArgumentError("index " + std::to_string(i) + " is out of range for the last axis of " +
                                          DimsToString(x.dims()));
    }
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), out);
    const int64_t rows = last ? x.numel() / last : 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < count; ++k) CopyElement(x, r * last + indices.ElementAsInt64(k), y, r * count + k);
    return absl::OkStatus();
  }
};

class LabelEncoder : public Kernel {
 public:
  explicit LabelEncoder(const KernelInfo& info) {
    const Node& n = info.node;
    keys_ = Values(n, "keys");
    values_ = Values(n, "values");
    if (const Attribute* d = n.attr("default_tensor"); d && d->kind == Attribute::Kind::kTensor) {
      default_ = d->t;
    } else if (values_.dtype() == DataType::kString) {
      default_ = Tensor::Scalar<std::string>(n.attr_string("default_string", "_Unused"));
    } else if (values_.dtype() == DataType::kInt64) {
      default_ = Tensor::Scalar<int64_t>(n.attr_int("default_int64", -1));
    } else {
      default_ = Tensor::Scalar<float>(n.attr_float("default_float", -0.f));
    }
    for (int64_t i = keys_.numel() - 1; i >= 0; --i) {  // the first of repeated keys wins
      if (keys_.dtype() == DataType::kString) by_string_[keys_.data<std::string>()[i]] = i;
      else by_number_[keys_.ElementAsDouble(i)] = i;
    }
  }

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (!keys_.defined() || !values_.defined() || keys_.numel() != values_.numel())
      return absl::InvalidArgumentError("keys and values must be given and of the same length");
    if ((x.dtype() == DataType::kString) != (keys_.dtype() == DataType::kString))
      return absl::InvalidArgumentError(std::string("X is ") + DataTypeName(x.dtype()) + " but the keys are " +
                                        DataTypeName(keys_.dtype()));
    if (default_.dtype() != values_.dtype() || default_.numel() != 1)
      return absl::InvalidArgumentError("the default must be one value of the values' type");
    Tensor& y = ctx.AllocateOutput(0, values_.dtype(), x.dims());
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t found = -1;
      if (x.dtype() == DataType::kString) {
        auto it = by_string_.find(x.data<std::string>()[i]);
        if (it != by_string_.end()) found = it->second;
      } else {
        auto it = by_number_.find(x.ElementAsDouble(i));
        if (it != by_number_.end()) found = it->second;
      }
      if (found >= 0) CopyElement(values_, found, y, i);
      else CopyElement(default_, 0, y, i);
    }
    return absl::OkStatus();
  }

 private:
  // The keys or values ("keys" / "values") of whichever attribute form the node uses.
  static Tensor Values(const Node& n, const std::string& what) {
    if (const Attribute* t = n.attr(what + "_tensor"); t && t->kind == Attribute::Kind::kTensor) return t->t;
    if (n.has_attr(what + "_strings")) {
      auto v = n.attr_strings(what + "_strings");
      return Tensor::FromVector<std::string>(v, {static_cast<int64_t>(v.size())});
    }
    if (n.has_attr(what + "_int64s")) {
      auto v = n.attr_ints(what + "_int64s");
      return Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())});
    }
    if (n.has_attr(what + "_floats")) {
      auto v = n.attr_floats(what + "_floats");
      return Tensor::FromVector<float>(v, {static_cast<int64_t>(v.size())});
    }
    return Tensor();
  }

  Tensor keys_, values_, default_;
  std::map<std::string, int64_t> by_string_;
  std::map<double, int64_t> by_number_;
};

class TreeEnsemble : public Kernel {
 public:
  explicit TreeEnsemble(const KernelInfo& info) {
    const Node& n = info.node;
    feature_ = n.attr_ints("nodes_featureids");
    true_ = n.attr_ints("nodes_truenodeids");
    false_ = n.attr_ints("nodes_falsenodeids");
    true_leaf_ = n.attr_ints("nodes_trueleafs");
    false_leaf_ = n.attr_ints("nodes_falseleafs");
    leaf_target_ = n.attr_ints("leaf_targetids");
    roots_ = n.attr_ints("tree_roots");
    missing_true_ = n.attr_ints("nodes_missing_value_tracks_true");
    aggregate_ = n.attr_int("aggregate_function", 1);
    post_ = n.attr_int("post_transform", 0);
    targets_ = n.attr_int("n_targets", 1);
    modes_ = DoublesOf(n, "nodes_modes");
    splits_ = DoublesOf(n, "nodes_splits");
    leaf_weight_ = DoublesOf(n, "leaf_weights");
    // Members of each BRANCH_MEMBER node, in node order, NaN-separated.
    const std::vector<double> members = DoublesOf(n, "membership_values");
    members_.resize(modes_.size());
    size_t next = 0;
    for (size_t k = 0; k < modes_.size(); ++k) {
      if (modes_[k] != kMember) continue;
      while (next < members.size() && !std::isnan(members[next])) members_[k].push_back(members[next++]);
      ++next;
    }
  }

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    const size_t nodes = modes_.size();
    for (const auto* v : {&feature_, &true_, &false_, &true_leaf_, &false_leaf_})
      if (v->size() != nodes) return absl::InvalidArgumentError("the nodes_* attributes differ in length");
    if (leaf_target_.size() != leaf_weight_.size())
      return absl::InvalidArgumentError("leaf_targetids and leaf_weights differ in length");
    if (post_ != 0 && post_ != 1 && post_ != 2)
      return absl::UnimplementedError("post_transform " + std::to_string(post_) + " (SOFTMAX_ZERO/PROBIT)");
    if (x.rank() != 2) return absl::InvalidArgumentError("X must be [N, features], got " + DimsToString(x.dims()));
    const int64_t N = x.dim(0), F = x.dim(1);
    Tensor& y = ctx.AllocateOutput(0, x.dtype(), {N, targets_});
    std::vector<double> row(targets_);
    for (int64_t s = 0; s < N; ++s) {
      const double init = aggregate_ == 2 ? std::numeric_limits<double>::max()
                          : aggregate_ == 3 ? std::numeric_limits<double>::lowest() : 0.0;
      std::fill(row.begin(), row.end(), init);
      for (int64_t root : roots_) {
        auto leaf = Walk(x, s, F, root);
        if (!leaf.ok()) return leaf.status();
        const int64_t t = leaf_target_[*leaf];
        if (t < 0 || t >= targets_) return absl::InvalidArgumentError("leaf target out of range");
        const double w = leaf_weight_[*leaf];
        switch (aggregate_) {
          case 0: row[t] += w / static_cast<double>(roots_.size()); break;
          case 2: row[t] = std::min(row[t], w); break;
          case 3: row[t] = std::max(row[t], w); break;
          default: row[t] += w;
        }
      }
      if (post_ == 1) {
        double mx = *std::max_element(row.begin(), row.end()), sum = 0;
        for (double& v : row) sum += (v = std::exp(v - mx));
        for (double& v : row) v /= sum;
      } else if (post_ == 2) {
        for (double& v : row) v = 1.0 / (1.0 + std::exp(-v));
      }
      for (int64_t t = 0; t < targets_; ++t) {
        Tensor one = Tensor::Scalar<double>(row[t]).CastTo(x.dtype());
        CopyElement(one, 0, y, s * targets_ + t);
      }
    }
    return absl::OkStatus();
  }

 private:
  static constexpr double kMember = 6;

  static std::vector<double> DoublesOf(const Node& n, const std::string& name) {
    std::vector<double> v;
    if (const Attribute* a = n.attr(name); a && a->kind == Attribute::Kind::kTensor)
      for (int64_t i = 0; i < a->t.numel(); ++i) v.push_back(a->t.ElementAsDouble(i));
    return v;
  }

  // The leaf that sample `s` of x reaches from node `root`.
  absl::StatusOr<int64_t> Walk(const Tensor& x, int64_t s, int64_t F, int64_t root) const {
    const int64_t nodes = static_cast<int64_t>(modes_.size());
    if (root < 0 || root >= nodes) return absl::InvalidArgumentError("tree root out of range");
    // A root that is a leaf on both sides with one id is a one-leaf tree.
    if (true_leaf_[root] && false_leaf_[root] && true_[root] == false_[root]) return true_[root];
    int64_t k = root;
    for (int64_t steps = 0; steps <= nodes; ++steps) {
      const int64_t f = feature_[k];
      if (f < 0 || f >= F) return absl::InvalidArgumentError("feature id out of range");
      const double v = x.ElementAsDouble(s * F + f), split = k < static_cast<int64_t>(splits_.size()) ? splits_[k] : 0;
      bool go = false;
      switch (static_cast<int>(modes_[k])) {
        case 0: go = v <= split; break;
        case 1: go = v < split; break;
        case 2: go = v >= split; break;
        case 3: go = v > split; break;
        case 4: go = v == split; break;
        case 5: go = v != split; break;
        case 6: go = std::find(members_[k].begin(), members_[k].end(), v) != members_[k].end(); break;
        default: return absl::InvalidArgumentError("unknown node mode " + std::to_string(modes_[k]));
      }
      if (std::isnan(v) && k < static_cast<int64_t>(missing_true_.size()) && missing_true_[k]) go = true;
      const int64_t next = go ? true_[k] : false_[k];
      if (go ? true_leaf_[k] : false_leaf_[k]) {
        if (next < 0 || next >= static_cast<int64_t>(leaf_weight_.size()))
          return absl::InvalidArgumentError("leaf id out of range");
        return next;
      }
      if (next < 0 || next >= nodes) return absl::InvalidArgumentError("node id out of range");
      k = next;
    }
    return absl::InvalidArgumentError("the tree has a cycle");
  }

  std::vector<int64_t> feature_, true_, false_, true_leaf_, false_leaf_, leaf_target_, roots_, missing_true_;
  std::vector<double> modes_, splits_, leaf_weight_;
  std::vector<std::vector<double>> members_;
  int64_t aggregate_, post_, targets_;
};

KernelDef MlDef(const std::string& op, int since, std::vector<DataType> types, KernelFactory f) {
  KernelDef d;
  d.domain = kMl;
  d.op = op;
  d.since = since;
  d.types = std::move(types);
  d.create = std::move(f);
  return d;
}

}  // namespace

void RegisterMlKernels(KernelRegistry& r) {
  r.Add(MlDef("Binarizer", 1, types::kNumeric, Make<Binarizer>()));
  r.Add(MlDef("ArrayFeatureExtractor", 1, {}, Make<ArrayFeatureExtractor>()));
  r.Add(MlDef("LabelEncoder", 2, {}, Make<LabelEncoder>()));
  r.Add(MlDef("TreeEnsemble", 5, types::kFloats, Make<TreeEnsemble>()));
}

}  // namespace tandem::cpu
