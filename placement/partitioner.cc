#include "placement/partitioner.h"

#include <limits>
#include <set>

#include "framework/copy_kernel.h"

namespace tandem {

KernelInfo DescribeNode(const Graph& graph, const Node& node, ExecutionProvider* provider) {
  KernelInfo info{node};
  info.opset = graph.opset(node.domain);
  info.provider = provider;
  auto shape_of = [&graph](const std::string& v) {
    auto init = v.empty() ? graph.initializers.end() : graph.initializers.find(v);
    if (init != graph.initializers.end()) return Shape::Of(init->second.dims());
    const ValueInfo* vi = v.empty() ? nullptr : graph.FindValueInfo(v);
    return vi && vi->kind == ValueKind::kTensor ? vi->shape : Shape::Unknown();
  };
  for (const std::string& in : node.inputs) {
    info.input_types.push_back(in.empty() ? DataType::kUndefined : graph.ValueType(in));
    auto it = in.empty() ? graph.initializers.end() : graph.initializers.find(in);
    info.constant_inputs.push_back(it == graph.initializers.end() ? nullptr : &it->second);
    info.input_shapes.push_back(shape_of(in));
  }
  for (const std::string& out : node.outputs) {
    info.output_types.push_back(out.empty() ? DataType::kUndefined : graph.ValueType(out));
    info.output_shapes.push_back(shape_of(out));
  }
  return info;
}

namespace {

const Device kHost{DeviceType::kCpu, 0};

bool HasSubgraph(const Node& node) {
  for (const auto& [key, a] : node.attributes)
    if (a.kind == Attribute::Kind::kGraph && a.g) return true;
  return false;
}

// Shape, Size, or a node computing int64 (or bool: Equal/Where over dims) vectors or
// scalars (at most 64 elements where known) from such values, at least one of them int64
// — Gather/Concat/Slice/Equal/Where/... over shapes: work for the host, whose results
// host kernels read. Data (token ids, masks, quantized tensors) is not this: larger or of
// rank > 1, or of another type.
bool IsShapeArithmetic(const Graph& graph, const Node& node) {
  if (node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size")) return true;
  if (HasSubgraph(node) || node.outputs.empty()) return false;
  bool int64_seen = false, bool_seen = false;
  const auto shape_type = [&](DataType t) {
    int64_seen = int64_seen || t == DataType::kInt64;
    bool_seen = bool_seen || t == DataType::kBool;
    return t == DataType::kInt64 || t == DataType::kBool;
  };
  const auto rank_above_one = [&graph](const std::string& v) {
    auto init = graph.initializers.find(v);
    if (init != graph.initializers.end()) return init->second.rank() > 1;
    const ValueInfo* vi = graph.FindValueInfo(v);
    return vi && vi->shape.rank_known && vi->shape.dims.size() > 1;
  };
  for (const std::string& in : node.inputs)
    if (!in.empty() && !shape_type(graph.ValueType(in))) return false;
  for (const std::string& out : node.outputs)
    if (!out.empty() && !shape_type(graph.ValueType(out))) return false;
  // Masks compare data, not dims: a bool node reading a matrix is not shape arithmetic.
  if (bool_seen)
    for (const std::string& in : node.inputs)
      if (!in.empty() && rank_above_one(in)) return false;
  for (const std::string& out : node.outputs) {
    if (out.empty()) continue;
    const ValueInfo* vi = graph.FindValueInfo(out);
    if (!vi || !vi->shape.rank_known) continue;
    if (vi->shape.dims.size() > 1) return false;
    if (vi->shape.fully_known() && NumElements(vi->shape.ToDims()) > 64) return false;
  }
  return int64_seen;
}

// `s` with its symbolic dims replaced by their values in `dims` where given.
Shape BindDims(Shape s, const std::map<std::string, int64_t>& dims) {
  for (Dim& d : s.dims) {
    auto it = d.known() || d.symbol.empty() ? dims.end() : dims.find(d.symbol);
    if (it != dims.end()) d.value = it->second;
  }
  return s;
}

// Renames reads of outer-scope value `from` to `to` inside a subgraph and its bodies.
void RenameOuterReads(Graph& g, const std::string& from, const std::string& to) {
  for (std::string& name : g.outer_scope_names)
    if (name == from) name = to;
  for (Node& n : g.nodes) {
    for (std::string& in : n.inputs)
      if (in == from) in = to;
    for (auto& [key, a] : n.attributes)
      if (a.kind == Attribute::Kind::kGraph && a.g) RenameOuterReads(*a.g, from, to);
  }
}

// Builds the partitioned node list of one graph.
class Partitioner {
 public:
  Partitioner(Graph& graph, const std::vector<ExecutionProvider*>& providers,
              const PartitionOptions& options)
      : graph_(graph), providers_(providers), options_(options) {
    for (ExecutionProvider* p : providers)
      if (!host_ && p->device().type == DeviceType::kCpu) host_ = p;
  }

  absl::StatusOr<PartitionResult> Run() {
    if (providers_.empty()) return absl::InvalidArgumentError("[partition] no execution providers");
    if (options_.policy == PartitionOptions::Policy::kLowestCost) PlanLowestCost();
    for (Node& node : graph_.nodes) {
      if (IsDeviceCopy(node)) {  // already partitioned
        out_.push_back(std::move(node));
        continue;
      }
      absl::Status s = Place(node);
      if (!s.ok()) return s;
    }
    if (options_.outputs_on_host) CopyOutputsToHost();
    graph_.nodes = std::move(out_);
    if (result_.copies_inserted && !graph_.opsets.count(kTandemDomain)) graph_.opsets[kTandemDomain] = 1;
    return result_;
  }

 private:
  absl::Status Place(Node& node) {
    const bool host_only = HostOnly(node);
    // The first capable provider in the user's order, or kLowestCost's planned one.
    ExecutionProvider* best = nullptr;
    const KernelDef* best_def = nullptr;
    std::string reasons;
    auto planned = planned_.find(&node);
    for (ExecutionProvider* p : providers_) {
      if (host_only && p != host_ && host_) continue;
      if (planned != planned_.end() && planned->second != p) continue;
      KernelInfo info = DescribeNode(graph_, node, p);
      if (!p->CanRun(info)) {
        reasons += (reasons.empty() ? "" : "; ") +
                   p->registry().ExplainMiss(node.domain, node.op_type, info.opset,
                                             KernelLookupType(p->registry(), info));
        continue;
      }
      best = p;
      best_def = p->FindKernel(info);
      break;
    }
    if (!best)
      return absl::UnimplementedError("[partition] " + node.Describe() + ": no provider can run it (" +
                                      reasons + ")");
    node.provider = best->name();
    ++result_.nodes_per_provider[best->name()];
    if (HasSubgraph(node)) {
      absl::Status s = PlaceSubgraphs(node);
      if (!s.ok()) return s;
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      std::string& in = node.inputs[i];
      if (in.empty() || (best_def && best_def->reads_metadata_only(static_cast<int>(i)))) continue;
      const bool host_read = best_def && best_def->reads_on_host(static_cast<int>(i));
      in = OnDevice(in, host_read ? kHost : best->device());
    }
    for (const std::string& o : node.outputs)
      if (!o.empty()) value_device_[o] = best->device();
    out_.push_back(std::move(node));
    return absl::OkStatus();
  }

  // Control flow and shape arithmetic run on the host provider.
  bool HostOnly(const Node& node) const { return HasSubgraph(node) || IsShapeArithmetic(graph_, node); }

  // Bodies run on the host provider; what they read from enclosing graphs moves there.
  absl::Status PlaceSubgraphs(Node& node) {
    std::vector<ExecutionProvider*> host_only = {host_ ? host_ : providers_.front()};
    for (auto& [key, a] : node.attributes) {
      if (a.kind != Attribute::Kind::kGraph || !a.g) continue;
      std::vector<std::string> outer = a.g->outer_scope_names;
      for (const std::string& name : outer) {
        std::string on_host = OnDevice(name, kHost);
        if (on_host != name) RenameOuterReads(*a.g, name, on_host);
      }
      auto sub = Partition(*a.g, host_only, options_);
      if (!sub.ok()) return sub.status();
      for (const auto& [p, n] : sub->nodes_per_provider) result_.nodes_per_provider[p] += n;
      result_.copies_inserted += sub->copies_inserted;
    }
    return absl::OkStatus();
  }

  // ---- kLowestCost: choose every node's provider before any Copy is inserted ----

  int64_t BytesOf(const std::string& value) const {
    auto init = graph_.initializers.find(value);
    if (init != graph_.initializers.end()) return static_cast<int64_t>(init->second.bytes());
    const ValueInfo* vi = graph_.FindValueInfo(value);
    if (!vi || vi->dtype == DataType::kUndefined) return 4096;
    const Shape s = BindDims(vi->shape, options_.dim_values);
    return s.rank_known && s.fully_known() ? NumElements(s.ToDims()) * static_cast<int64_t>(SizeOf(vi->dtype))
                                           : 4096;
  }

  // Microseconds to bring `value` from `from` to `to` (through the host between devices).
  double TransferUs(const std::string& value, ExecutionProvider* from, ExecutionProvider* to) const {
    if (from == to || graph_.initializers.count(value) || options_.resident_inputs.count(value)) return 0;
    const int64_t bytes = BytesOf(value);
    return (from ? from->CopyCostUs(bytes) : 0) + (to ? to->CopyCostUs(bytes) : 0);
  }

  // A provider able to run a node, its Capability() estimate and its kernel (which says
  // which inputs it reads on the host or for their dims alone).
  struct Candidate {
    ExecutionProvider* provider;
    double us;
    const KernelDef* def;
  };

  // The node's candidates in the user's order.
  std::vector<Candidate> Candidates(const Node& node) const {
    std::vector<Candidate> out;
    if (IsDeviceCopy(node)) return out;
    const bool host_only = HostOnly(node);
    for (ExecutionProvider* p : providers_) {
      if (host_only && p != host_ && host_) continue;
      KernelInfo info = DescribeNode(graph_, node, p);
      for (Shape& s : info.input_shapes) s = BindDims(std::move(s), options_.dim_values);
      for (Shape& s : info.output_shapes) s = BindDims(std::move(s), options_.dim_values);
      if (auto cost = p->Capability(info)) out.push_back({p, *cost, p->FindKernel(info)});
    }
    return out;
  }

  // Estimated total of a placement (`choose` picks each node's provider among its
  // candidates, knowing where the inputs are), including copies and outputs back home.
  template <typename Choose>
  double Simulate(const std::vector<std::vector<Candidate>>& candidates,
                  std::map<const Node*, ExecutionProvider*>* placement, Choose choose) const {
    std::map<std::string, ExecutionProvider*> where;  // value -> provider (absent: host)
    std::set<std::pair<std::string, ExecutionProvider*>> copied;  // one Copy per (value, device)
    auto at = [&](const std::string& v) {
      auto it = where.find(v);
      return it == where.end() ? host_ : it->second;
    };
    double total = 0;
    for (size_t k = 0; k < graph_.nodes.size(); ++k) {
      const Node& node = graph_.nodes[k];
      if (candidates[k].empty()) continue;
      // The copies running on `c` needs, as Place will insert them: (value, destination).
      auto moves = [&](const Candidate& c) {
        std::vector<std::pair<std::string, ExecutionProvider*>> out;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
          const std::string& in = node.inputs[i];
          const int ii = static_cast<int>(i);
          if (in.empty() || (c.def && c.def->reads_metadata_only(ii))) continue;
          ExecutionProvider* to = c.def && c.def->reads_on_host(ii) ? host_ : c.provider;
          if (at(in) != to && !copied.count({in, to})) out.emplace_back(in, to);
        }
        return out;
      };
      auto with_copies = [&](const Candidate& c) {
        double us = c.us;
        for (const auto& [value, to] : moves(c)) us += TransferUs(value, at(value), to);
        return us;
      };
      double best = std::numeric_limits<double>::infinity();
      const Candidate* chosen = nullptr;
      for (const Candidate& c : candidates[k]) {
        if (!choose(c.provider)) continue;
        const double us = with_copies(c);
        if (us < best) best = us, chosen = &c;
      }
      if (!chosen) {  // the chosen provider lacks this node: the first that has it
        chosen = &candidates[k].front();
        best = with_copies(*chosen);
      }
      for (const auto& move : moves(*chosen)) copied.insert(move);
      total += best;
      (*placement)[&node] = chosen->provider;
      for (const std::string& o : node.outputs) where[o] = chosen->provider;
    }
    if (options_.outputs_on_host)
      for (const ValueInfo& out : graph_.outputs) total += TransferUs(out.name, at(out.name), host_);
    return total;
  }

  void PlanLowestCost() {
    std::vector<std::vector<Candidate>> candidates;
    for (const Node& node : graph_.nodes) candidates.push_back(Candidates(node));
    double best = std::numeric_limits<double>::infinity();
    // Whole graph on each provider first (user order), then node by node: ties keep the
    // earlier candidate.
    auto consider = [&](const std::string& name, auto choose) {
      std::map<const Node*, ExecutionProvider*> placement;
      const double total = Simulate(candidates, &placement, choose);
      result_.candidates.emplace_back(name, total);
      if (total < best || planned_.empty()) best = total, planned_ = std::move(placement), result_.plan = name;
    };
    for (ExecutionProvider* only : providers_)
      consider("all on " + only->name(), [only](ExecutionProvider* p) { return p == only; });
    if (providers_.size() > 1) consider("node by node", [](ExecutionProvider*) { return true; });
    result_.estimated_us = best;
    for (size_t k = 0; k < graph_.nodes.size(); ++k) {
      if (candidates[k].empty()) continue;
      const Node& node = graph_.nodes[k];
      const std::string label = !node.name.empty() ? node.name : node.outputs.empty() ? node.op_type : node.outputs[0];
      NodeEstimate e{label, node.op_type, planned_[&node]->name(), {}};
      for (const Candidate& c : candidates[k]) e.us.emplace_back(c.provider->name(), c.us);
      result_.node_estimates.push_back(std::move(e));
    }
  }

  Device DeviceOf(const std::string& value) const {
    auto it = value_device_.find(value);
    return it == value_device_.end() ? kHost : it->second;
  }

  // Gives `to` the type information known for `from` (kernels read it from the graph).
  void InheritType(const std::string& from, const std::string& to) {
    const ValueInfo* vi = graph_.FindValueInfo(from);
    ValueInfo copy;
    if (vi) {
      copy = *vi;
    } else {
      auto init = graph_.initializers.find(from);
      if (init == graph_.initializers.end()) return;
      copy.dtype = init->second.dtype();
      copy.shape = Shape::Of(init->second.dims());
    }
    copy.name = to;
    graph_.value_info[to] = copy;
  }

  ExecutionProvider* ProviderOn(const Device& d) const { return tandem::ProviderOn(providers_, d); }

  // The name under which `value` is available on `target`, inserting a Copy if needed.
  std::string OnDevice(const std::string& value, const Device& target) {
    const Device src = DeviceOf(value);
    if (src == target) return value;
    const std::string key = value + "@" + target.ToString();
    auto done = copies_.find(key);
    if (done != copies_.end()) return done->second;
    ExecutionProvider* dest = ProviderOn(target);
    const std::string copied = value + "/copy_to_" + (dest ? dest->name() : "cpu");
    AppendCopy(value, copied, src, target);
    copies_[key] = copied;
    return copied;
  }

  // Appends Copy(value) -> output moving it from `src` to `target`. The copy runs on the
  // device side of the edge (the destination for device->device).
  void AppendCopy(const std::string& value, const std::string& output, const Device& src,
                  const Device& target) {
    ExecutionProvider* runner = ProviderOn(target.type == DeviceType::kCpu ? src : target);
    ExecutionProvider* dest = ProviderOn(target);
    const std::string to = dest ? dest->name() : "cpu";
    Node copy;
    copy.op_type = "Copy";
    copy.domain = kTandemDomain;
    copy.name = value + "/copy_to_" + to;
    copy.inputs = {value};
    copy.outputs = {output};
    copy.attributes["to"] = StringAttribute(to);
    copy.provider = runner ? runner->name() : to;
    value_device_[output] = target;
    InheritType(value, output);
    out_.push_back(std::move(copy));
    ++result_.copies_inserted;
  }

  // Graph outputs produced on a device: the producer writes "<name>/on_<provider>" and a
  // Copy back to the host produces the output's own name.
  void CopyOutputsToHost() {
    for (const ValueInfo& out : graph_.outputs) {
      const Device d = DeviceOf(out.name);
      if (d == kHost) continue;
      ExecutionProvider* p = ProviderOn(d);
      const std::string device_name = out.name + "/on_" + (p ? p->name() : d.ToString());
      for (Node& n : out_) {
        for (std::string& o : n.outputs)
          if (o == out.name) o = device_name;
        for (std::string& in : n.inputs)
          if (in == out.name) in = device_name;
      }
      value_device_[device_name] = d;
      InheritType(out.name, device_name);
      AppendCopy(device_name, out.name, d, kHost);
    }
  }

  Graph& graph_;
  const std::vector<ExecutionProvider*>& providers_;
  PartitionOptions options_;
  ExecutionProvider* host_ = nullptr;
  PartitionResult result_;
  std::map<std::string, Device> value_device_;    // where each value lives (default: host)
  std::map<std::string, std::string> copies_;     // "value@device" -> copy's output
  std::map<const Node*, ExecutionProvider*> planned_;  // kLowestCost's choice per node
  std::vector<Node> out_;
};

}  // namespace

absl::StatusOr<PartitionResult> Partition(Graph& graph,
                                          const std::vector<ExecutionProvider*>& providers,
                                          const PartitionOptions& options) {
  return Partitioner(graph, providers, options).Run();
}

}  // namespace tandem
