#include "onnx_import/export.h"

#include <onnx/checker.h>

#include <climits>
#include <utility>

#include "onnx_import/atomic_file.h"
#include "onnx_import/import.h"
#include "onnx_import/tensor_proto.h"

namespace tandem {

namespace {

void TypeToProto(const ValueInfo& v, onnx::TypeProto* type);

void TensorTypeToProto(DataType dtype, const Shape& shape, onnx::TypeProto_Tensor* t) {
  t->set_elem_type(static_cast<int32_t>(dtype));
  if (!shape.rank_known) return;
  auto* s = t->mutable_shape();
  for (const Dim& d : shape.dims) {
    auto* dim = s->add_dim();
    if (d.known()) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

void TypeToProto(const ValueInfo& v, onnx::TypeProto* type) {
  switch (v.kind) {
    case ValueKind::kTensor:
      TensorTypeToProto(v.dtype, v.shape, type->mutable_tensor_type());
      break;
    case ValueKind::kSequence:
      type->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
          static_cast<int32_t>(v.elem_type));
      break;
    case ValueKind::kOptional: {
      ValueInfo inner = v;
      inner.kind = v.optional_of;
      inner.dtype = v.elem_type;
      TypeToProto(inner, type->mutable_optional_type()->mutable_elem_type());
      break;
    }
  }
}

void ValueInfoToProto(const ValueInfo& v, onnx::ValueInfoProto* p) {
  p->set_name(v.name);
  if (v.kind != ValueKind::kTensor || v.dtype != DataType::kUndefined) TypeToProto(v, p->mutable_type());
}

absl::Status GraphToProto(const Graph& g, onnx::GraphProto* gp);

absl::Status AttributeToProto(const std::string& name, const Attribute& a, onnx::AttributeProto* p) {
  using AP = onnx::AttributeProto;
  p->set_name(name);
  switch (a.kind) {
    case Attribute::Kind::kFloat: p->set_type(AP::FLOAT); p->set_f(a.f); break;
    case Attribute::Kind::kInt: p->set_type(AP::INT); p->set_i(a.i); break;
    case Attribute::Kind::kString: p->set_type(AP::STRING); p->set_s(a.s); break;
    case Attribute::Kind::kFloats:
      p->set_type(AP::FLOATS);
      for (float f : a.floats) p->add_floats(f);
      break;
    case Attribute::Kind::kInts:
      p->set_type(AP::INTS);
      for (int64_t i : a.ints) p->add_ints(i);
      break;
    case Attribute::Kind::kStrings:
      p->set_type(AP::STRINGS);
      for (const auto& s : a.strings) p->add_strings(s);
      break;
    case Attribute::Kind::kTensor:
      p->set_type(AP::TENSOR);
      TensorToProto(a.t, "", p->mutable_t());
      break;
    case Attribute::Kind::kGraph: {
      p->set_type(AP::GRAPH);
      auto s = GraphToProto(*a.g, p->mutable_g());
      if (!s.ok()) return s;
      break;
    }
    case Attribute::Kind::kType:
      p->set_type(AP::TYPE_PROTO);
      TypeToProto(a.type, p->mutable_tp());
      break;
    default:
      return absl::InvalidArgumentError("attribute '" + name + "' has no value");
  }
  return absl::OkStatus();
}

absl::Status GraphToProto(const Graph& g, onnx::GraphProto* gp) {
  gp->set_name(g.name.empty() ? "tandem" : g.name);
  for (const ValueInfo& v : g.inputs) ValueInfoToProto(v, gp->add_input());
  for (const ValueInfo& v : g.outputs) ValueInfoToProto(v, gp->add_output());
  // Floating-point values of the model's Constant nodes go back as Constant nodes (first,
  // so they precede their readers): as initializers they would read as trainable
  // parameters when re-imported. Integer ones (shapes, axes) cannot be, so they stay
  // initializers.
  for (const auto& [name, t] : g.initializers) {
    if (!g.constants.count(name) || !IsFloatingPoint(t.dtype())) {
      TensorToProto(t, name, gp->add_initializer());
      continue;
    }
    auto* c = gp->add_node();
    c->set_op_type("Constant");
    c->add_output(name);
    auto* value = c->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    TensorToProto(t, "", value->mutable_t());
  }
  for (const Node& n : g.nodes) {
    if (n.domain == "ai.tandem")
      return absl::InvalidArgumentError(n.Describe() + " is a Tandem-internal op and cannot be exported");
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (const auto& i : n.inputs) np->add_input(i);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& [key, a] : n.attributes) {
      auto s = AttributeToProto(key, a, np->add_attribute());
      if (!s.ok()) return absl::InvalidArgumentError(n.Describe() + ": " + std::string(s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ExportModel(const Graph& graph, const std::string& producer) {
  onnx::ModelProto m;
  m.set_ir_version(IrVersionForOpset(graph.opset("")));
  m.set_producer_name(producer);
  for (const auto& [domain, version] : graph.opsets) {
    if (domain == "ai.tandem") continue;
    auto* op = m.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  auto s = GraphToProto(graph, m.mutable_graph());
  if (!s.ok()) return absl::InvalidArgumentError("[export] " + std::string(s.message()));
  if (graph.opset("") <= kMaxLibOnnxOpset) {
    try {
      onnx::checker::check_model(m);
    } catch (const std::exception& e) {
      return absl::InternalError(std::string("[export] the exported model fails the ONNX checker: ") + e.what());
    }
  }
  return m;
}

absl::Status ExportModelFile(const Graph& graph, const std::string& path) {
  auto m = ExportModel(graph);
  if (!m.ok()) return m.status();
  return WriteModelFile(*m, path);
}

int IrVersionForOpset(int opset) {
  // onnx.helper.VERSION_TABLE: the first release that has each opset, and its IR version.
  static const std::pair<int, int> kFirstIr[] = {{19, 9}, {21, 10}, {23, 11}, {24, 12}, {25, 13}, {28, 14}};
  int ir = 8;
  for (const auto& [first_opset, version] : kFirstIr)
    if (opset >= first_opset) ir = version;
  return ir;
}

absl::Status WriteModelFile(onnx::ModelProto& model, const std::string& path, size_t external_threshold) {
  auto fail = [&](const std::string& what) { return absl::InvalidArgumentError("[export] " + path + ": " + what); };
  if (external_threshold > 0) {
    const size_t slash = path.find_last_of('/');
    const std::string data_name = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".data";
    const std::string data_path = (slash == std::string::npos ? "" : path.substr(0, slash + 1)) + data_name;
    std::string data;
    for (auto& init : *model.mutable_graph()->mutable_initializer()) {
      if (init.data_location() == onnx::TensorProto::EXTERNAL)
        return fail("initializer '" + init.name() + "' is still external; load it first");
      if (!init.has_raw_data() || init.raw_data().size() < external_threshold) continue;
      auto add = [&init](const std::string& key, const std::string& value) {
        auto* entry = init.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      };
      add("location", data_name);
      add("offset", std::to_string(data.size()));
      add("length", std::to_string(init.raw_data().size()));
      data += init.raw_data();
      init.clear_raw_data();
      init.set_data_location(onnx::TensorProto::EXTERNAL);
    }
    if (!data.empty()) {
      absl::Status s = WriteFileAtomically(data_path, data);
      if (!s.ok()) return absl::Status(s.code(), "[export] " + std::string(s.message()));
    }
  }
  if (model.ByteSizeLong() > static_cast<size_t>(INT32_MAX))
    return fail("the model is over protobuf's 2 GiB limit; write its weights as external data");
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return fail("serialization failed");
  absl::Status s = WriteFileAtomically(path, bytes);
  return s.ok() ? s : absl::Status(s.code(), "[export] " + std::string(s.message()));
}

}  // namespace tandem
