// ModelProto -> Graph: parsing, validation, shape inference, subgraphs.
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "graph/resource_limits.h"
#include "onnx_import/import.h"
#include "onnx_import/libonnx_isolated.h"
#include "onnx_import/tensor_proto.h"

namespace tandem {

namespace {

// Fills `out` (kind, dtype/shape or element type) from an ONNX type. Types we cannot
// represent (maps, sparse tensors, nesting beyond optional(sequence(tensor))) leave the
// kind kTensor with dtype kUndefined, as for an unknown type.
void TypeFromProto(const onnx::TypeProto& tp, ValueInfo& out) {
  auto elem_of = [](const onnx::TypeProto& t) -> DataType {
    if (!t.has_tensor_type() || !IsKnownDataType(t.tensor_type().elem_type())) return DataType::kUndefined;
    return static_cast<DataType>(t.tensor_type().elem_type());
  };
  if (tp.has_sequence_type()) {
    const auto& e = tp.sequence_type().elem_type();
    if (!e.has_tensor_type()) return;
    out.kind = ValueKind::kSequence;
    out.elem_type = elem_of(e);
    return;
  }
  if (tp.has_optional_type()) {
    const auto& e = tp.optional_type().elem_type();
    if (e.has_tensor_type()) {
      out.kind = ValueKind::kOptional;
      out.optional_of = ValueKind::kTensor;
      out.elem_type = elem_of(e);
    } else if (e.has_sequence_type() && e.sequence_type().elem_type().has_tensor_type()) {
      out.kind = ValueKind::kOptional;
      out.optional_of = ValueKind::kSequence;
      out.elem_type = elem_of(e.sequence_type().elem_type());
    }
    return;
  }
  if (!tp.has_tensor_type()) return;
  const auto& tt = tp.tensor_type();
  if (IsKnownDataType(tt.elem_type())) out.dtype = static_cast<DataType>(tt.elem_type());
  if (tt.has_shape()) {
    out.shape.rank_known = true;
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) dim.value = d.dim_value();
      else if (d.has_dim_param()) dim.symbol = d.dim_param();
      out.shape.dims.push_back(dim);
    }
  }
}

ValueInfo ValueInfoFromProto(const onnx::ValueInfoProto& vi) {
  ValueInfo out;
  out.name = vi.name();
  TypeFromProto(vi.type(), out);
  return out;
}

class Importer {
 public:
  Importer(std::string file, std::string model_dir)
      : file_(std::move(file)), model_dir_(std::move(model_dir)) {}

  void set_preloaded(std::map<std::string, Tensor> t) { preloaded_ = std::move(t); }

  absl::Status Fail(const std::string& what) const {
    return absl::InvalidArgumentError("[import] " + file_ + ": " + what);
  }

  absl::StatusOr<Graph> ImportGraph(const onnx::GraphProto& gp,
                                    const std::map<std::string, int>& opsets,
                                    const std::set<std::string>& outer) {
    const ResourceLimits limits = GetResourceLimits();
    if (depth_ > limits.max_subgraph_depth)
      return Fail(absl::StrCat("graph '", gp.name(), "' is nested ", depth_,
                               " subgraphs deep; the limit is ", limits.max_subgraph_depth));
    if (gp.node_size() > limits.max_nodes_per_graph)
      return Fail(absl::StrCat("graph '", gp.name(), "' has ", gp.node_size(),
                               " nodes; the limit is ", limits.max_nodes_per_graph));
    Graph g;
    g.name = gp.name();
    g.opsets = opsets;
    for (const auto& init : gp.initializer()) {
      auto pre = preloaded_.find(init.name());
      auto t = pre != preloaded_.end() && outer.empty() ? absl::StatusOr<Tensor>(pre->second)
                                                         : TensorFromProto(init, model_dir_);
      if (!t.ok()) return Fail("graph '" + gp.name() + "': " + std::string(t.status().message()));
      g.initializers[init.name()] = std::move(*t);
    }
    for (const auto& sp : gp.sparse_initializer())
      return Fail("sparse initializer '" + sp.values().name() + "' is not supported");
    for (const auto& in : gp.input())
      if (!g.initializers.count(in.name())) g.inputs.push_back(ValueInfoFromProto(in));
    for (const auto& out : gp.output()) g.outputs.push_back(ValueInfoFromProto(out));
    for (const auto* io : {&gp.input(), &gp.output()})
      for (const onnx::ValueInfoProto& vi : *io)
        for (const auto& d : vi.type().tensor_type().shape().dim())
          if (d.has_dim_value() && d.dim_value() < 0)
            return Fail(absl::StrCat("graph '", gp.name(), "': '", vi.name(),
                                     "' declares the negative dimension ", d.dim_value()));
    for (const auto& vi : gp.value_info()) g.value_info[vi.name()] = ValueInfoFromProto(vi);

    // Names this graph defines, for resolving subgraph outer scopes.
    std::set<std::string> scope = outer;
    for (const auto& in : gp.input()) scope.insert(in.name());
    for (const auto& [n, t] : g.initializers) scope.insert(n);
    for (const auto& np : gp.node())
      for (const auto& o : np.output()) scope.insert(o);

    for (const auto& np : gp.node()) {
      Node node;
      node.name = np.name();
      node.op_type = np.op_type();
      node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
      node.inputs.assign(np.input().begin(), np.input().end());
      node.outputs.assign(np.output().begin(), np.output().end());
      if (node.op_type.empty()) return Fail("a node named '" + node.name + "' has no op_type");
      if (!opsets.count(node.domain))
        return Fail(node.Describe() + ": domain '" + node.domain + "' is not in the model's opset_import");
      if (auto s = CheckRequiredInputs(node, opsets.at(node.domain)); !s.ok()) return s;
      for (const auto& ap : np.attribute()) {
        auto attr = ImportAttribute(ap, node, opsets, scope);
        if (!attr.ok()) return attr.status();
        node.attributes[ap.name()] = std::move(*attr);
      }
      if (node.domain.empty() && node.op_type == "Constant") {
        auto s = ConstantToInitializer(node, g);
        if (!s.ok()) return s;
        continue;
      }
      g.nodes.push_back(std::move(node));
    }
    // Names read here but defined in an enclosing graph.
    std::set<std::string> local;
    for (const auto& in : g.inputs) local.insert(in.name);
    for (const auto& [n, t] : g.initializers) local.insert(n);
    for (const Node& n : g.nodes)
      for (const auto& o : n.outputs) local.insert(o);
    std::set<std::string> used;
    for (const Node& n : g.nodes) {
      for (const auto& i : n.inputs)
        if (!i.empty()) used.insert(i);
      for (const auto& [k, a] : n.attributes)
        if (a.kind == Attribute::Kind::kGraph && a.g)
          used.insert(a.g->outer_scope_names.begin(), a.g->outer_scope_names.end());
    }
    for (const auto& o : g.outputs) used.insert(o.name);
    for (const auto& u : used)
      if (!local.count(u) && outer.count(u)) g.outer_scope_names.push_back(u);
    g.outer_scope_names.erase(std::unique(g.outer_scope_names.begin(), g.outer_scope_names.end()),
                              g.outer_scope_names.end());

    auto valid = g.Validate();
    if (!valid.ok()) return Fail(std::string(valid.message()));
    auto sorted = g.SortTopologically();
    if (!sorted.ok()) return Fail(std::string(sorted.message()));
    return g;
  }

 private:
  absl::StatusOr<Attribute> ImportAttribute(const onnx::AttributeProto& ap, const Node& node,
                                            const std::map<std::string, int>& opsets,
                                            const std::set<std::string>& scope) {
    Attribute a;
    using AP = onnx::AttributeProto;
    if (!ap.ref_attr_name().empty())
      return Fail(node.Describe() + ": attribute '" + ap.name() + "' refers to a function attribute, which is not supported");
    switch (ap.type()) {
      case AP::FLOAT: a.kind = Attribute::Kind::kFloat; a.f = ap.f(); break;
      case AP::INT: a.kind = Attribute::Kind::kInt; a.i = ap.i(); break;
      case AP::STRING: a.kind = Attribute::Kind::kString; a.s = ap.s(); break;
      case AP::FLOATS:
        a.kind = Attribute::Kind::kFloats;
        a.floats.assign(ap.floats().begin(), ap.floats().end());
        break;
      case AP::INTS:
        a.kind = Attribute::Kind::kInts;
        a.ints.assign(ap.ints().begin(), ap.ints().end());
        break;
      case AP::STRINGS:
        a.kind = Attribute::Kind::kStrings;
        a.strings.assign(ap.strings().begin(), ap.strings().end());
        break;
      case AP::TENSOR: {
        auto t = TensorFromProto(ap.t(), model_dir_);
        if (!t.ok())
          return Fail(node.Describe() + ": attribute '" + ap.name() + "': " + std::string(t.status().message()));
        a.kind = Attribute::Kind::kTensor;
        a.t = std::move(*t);
        break;
      }
      case AP::TYPE_PROTO:
        a.kind = Attribute::Kind::kType;
        TypeFromProto(ap.tp(), a.type);
        break;
      case AP::GRAPH: {
        ++depth_;
        auto sub = ImportGraph(ap.g(), opsets, scope);
        --depth_;
        if (!sub.ok()) return sub.status();
        a.kind = Attribute::Kind::kGraph;
        a.g = std::make_shared<Graph>(std::move(*sub));
        break;
      }
      default:
        return Fail(node.Describe() + ": attribute '" + ap.name() + "' has unsupported type " +
                    AP::AttributeType_Name(ap.type()));
    }
    return a;
  }

  // Kernels rely on the inputs the op's schema requires being there; libonnx's checker
  // says so only up to opset 17 and only when it runs. Newer opsets use the newest
  // schema libonnx knows: later versions keep every required input, except
  // OptionalHasElement, whose input is optional from opset 18.
  absl::Status CheckRequiredInputs(const Node& node, int opset) const {
    if (node.op_type == "OptionalHasElement" && node.domain.empty() && opset >= 18) return absl::OkStatus();
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
        node.op_type, std::min(opset, kMaxLibOnnxOpset), node.domain);
    if (!schema) return absl::OkStatus();
    const auto& formal = schema->inputs();
    for (size_t i = 0; i < formal.size(); ++i) {
      if (formal[i].GetOption() != onnx::OpSchema::Single) continue;
      if (i >= node.inputs.size() || node.inputs[i].empty())
        return Fail(absl::StrCat(node.Describe(), ": required input ", i, " '", formal[i].GetName(),
                                 "' is missing"));
    }
    return absl::OkStatus();
  }

  absl::Status ConstantToInitializer(const Node& node, Graph& g) {
    if (node.outputs.size() != 1 || node.outputs[0].empty())
      return Fail(node.Describe() + ": Constant must have exactly one output");
    if (node.attributes.size() != 1)
      return Fail(node.Describe() + ": Constant needs exactly one value attribute");
    const auto& [key, a] = *node.attributes.begin();
    Tensor t;
    if (key == "value" && a.kind == Attribute::Kind::kTensor) t = a.t;
    else if (key == "value_float") t = Tensor::Scalar<float>(a.f);
    else if (key == "value_int") t = Tensor::Scalar<int64_t>(a.i);
    else if (key == "value_floats") t = Tensor::FromVector<float>(a.floats, {static_cast<int64_t>(a.floats.size())});
    else if (key == "value_ints") t = Tensor::FromVector<int64_t>(a.ints, {static_cast<int64_t>(a.ints.size())});
    else if (key == "value_string") t = Tensor::FromVector<std::string>({a.s}, {});
    else if (key == "value_strings")
      t = Tensor::FromVector<std::string>(a.strings, {static_cast<int64_t>(a.strings.size())});
    else return Fail(node.Describe() + ": unsupported Constant attribute '" + key + "'");
    g.initializers[node.outputs[0]] = std::move(t);
    g.constants.insert(node.outputs[0]);
    return absl::OkStatus();
  }

  std::string file_;
  std::string model_dir_;
  std::map<std::string, Tensor> preloaded_;  // external initializers of the main graph
  int depth_ = 0;  // subgraphs entered, for ResourceLimits::max_subgraph_depth
};

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Sets every dimension named in `fixed` to its value in the graph's inputs, outputs and
// value_info; an unused name is an error (a typo would otherwise go unnoticed).
absl::Status FixDims(onnx::GraphProto* graph, const std::map<std::string, int64_t>& fixed) {
  if (fixed.empty()) return absl::OkStatus();
  std::set<std::string> used;
  auto fix = [&](onnx::ValueInfoProto& v, bool is_input) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    for (auto& dim : *v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      auto it = dim.has_dim_param() ? fixed.find(dim.dim_param()) : fixed.end();
      if (it == fixed.end()) continue;
      if (is_input) used.insert(it->first);
      dim.set_dim_value(it->second);
    }
  };
  for (auto& v : *graph->mutable_input()) fix(v, true);
  for (auto& v : *graph->mutable_output()) fix(v, false);
  for (auto& v : *graph->mutable_value_info()) fix(v, false);
  for (const auto& [name, value] : fixed) {
    if (value < 0) return absl::InvalidArgumentError("dimension '" + name + "' cannot be fixed to a negative size");
    if (!used.count(name)) return absl::InvalidArgumentError("no input has a dimension named '" + name + "'");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> ImportModelBuffer(const void* data, size_t size, const std::string& model_dir,
                                        const std::string& name, const ImportOptions& options) {
  auto fail = [&](const std::string& what) {
    return absl::InvalidArgumentError("[import] " + name + ": " + what);
  };
  if (size == 0) return fail("the model is empty (0 bytes)");
  if (size > static_cast<size_t>(INT32_MAX))
    return fail("the model is " + std::to_string(size) + " bytes; a protobuf model must be under 2 GiB "
                "(keep large weights in external data files)");
  onnx::ModelProto model;
  if (!ParseModelProto(data, size, &model))
    return fail("not a valid ONNX model: protobuf parsing failed (truncated or corrupt file, or "
                "subgraphs nested deeper than the parser's limit?)");
  if (!model.has_graph()) return fail("the model has no graph (is this an ONNX file?)");
  if (model.ir_version() <= 0) return fail("the model has no ir_version (is this an ONNX file?)");
  if (auto fixed = FixDims(model.mutable_graph(), options.fixed_dims); !fixed.ok())
    return fail(std::string(fixed.message()));
  std::map<std::string, int> opsets;
  for (const auto& op : model.opset_import()) {
    std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    opsets[domain] = static_cast<int>(op.version());
  }
  if (!opsets.count("") && model.ir_version() < 3) opsets[""] = 1;
  if (opsets.empty()) return fail("the model imports no opset");
  int opset = opsets.count("") ? opsets[""] : 1;
  if (opset < 1 || opset > kMaxSupportedOpset)
    return fail(absl::StrCat("ai.onnx opset ", opset, " is not supported (supported: 1-",
                             kMaxSupportedOpset, ")"));
  bool libonnx_knows = opset <= kMaxLibOnnxOpset;
  for (const auto& [domain, version] : opsets)
    if (domain == "ai.onnx.ml" && version > 3) libonnx_knows = false;
  // External initializers are read (and confined to the model's folder) before anything
  // else; the checker then sees them inline, since it would resolve paths against the
  // working directory.
  std::map<std::string, Tensor> external;
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    auto t = TensorFromProto(init, model_dir);
    if (!t.ok()) return fail(std::string(t.status().message()));
    external[init.name()] = std::move(*t);
  }
  if (libonnx_knows && (options.run_checker || options.run_shape_inference)) {
    // libonnx 1.12's checker refuses any IR version past its own (8), which today's onnx
    // writes by default (onnx.helper.make_model: 10 and up) even at opsets it knows; what
    // the later IR versions add needs later opsets (float8, int4), so it checks such a
    // model as of its own IR version.
    const bool newer_ir = model.ir_version() > onnx::IR_VERSION;
    onnx::ModelProto inline_copy;  // what the checker sees when data is external or IR newer
    if (options.run_checker && (!external.empty() || newer_ir)) {
      inline_copy = model;
      for (auto& init : *inline_copy.mutable_graph()->mutable_initializer()) {
        auto it = external.find(init.name());
        if (it != external.end()) TensorToProto(it->second, it->first, &init);
      }
      if (newer_ir) inline_copy.set_ir_version(onnx::IR_VERSION);
    }
    auto passes = RunLibOnnxIsolated(model, options.run_checker && (!external.empty() || newer_ir) ? inline_copy : model,
                                     options.run_checker, options.run_shape_inference);
    if (!passes.ok()) return fail(std::string(passes.message()));
  }
  Importer importer(name, model_dir);
  importer.set_preloaded(std::move(external));
  return importer.ImportGraph(model.graph(), opsets, {});
}

absl::StatusOr<Graph> ImportModelFile(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // ENOENT -> NotFound, EACCES -> PermissionDenied, ...; errno 0 would read as success.
    const int err = errno;
    const std::string what = "[import] " + path + ": cannot open file";
    return err ? absl::ErrnoToStatus(err, what) : absl::NotFoundError(what);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  return ImportModelBuffer(bytes.data(), bytes.size(), DirName(path), path, options);
}

}  // namespace tandem
