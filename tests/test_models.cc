#include "tests/test_models.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/remove_at_exit.h"
#include "training/trainer.h"

namespace tandem::testing {

namespace {
void SetTensorType(onnx::ValueInfoProto* v, const std::string& name, int64_t n) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(n);
}
}  // namespace

onnx::ModelProto EmptyModel(int opset, const std::string& graph_name) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tandem-tests");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name(graph_name);
  return m;
}

onnx::ModelProto UnaryChainModel(const std::vector<std::string>& ops, int64_t n, int opset) {
  onnx::ModelProto m = EmptyModel(opset);
  auto* g = m.mutable_graph();
  SetTensorType(g->add_input(), "x", n);
  std::string prev = "x";
  for (size_t i = 0; i < ops.size(); ++i) {
    auto* node = g->add_node();
    node->set_op_type(ops[i]);
    node->set_name("n" + std::to_string(i));
    node->add_input(prev);
    prev = i + 1 == ops.size() ? "y" : "t" + std::to_string(i);
    node->add_output(prev);
  }
  SetTensorType(g->add_output(), "y", n);
  return m;
}

onnx::ModelProto AddInitializerModel(int64_t n) {
  onnx::ModelProto m = EmptyModel(13);
  auto* g = m.mutable_graph();
  SetTensorType(g->add_input(), "x", n);
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(n);
  for (int64_t i = 0; i < n; ++i) w->add_float_data(0.5f * static_cast<float>(i));
  auto* node = g->add_node();
  node->set_op_type("Add");
  node->set_name("add");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  SetTensorType(g->add_output(), "y", n);
  return m;
}

std::string Serialize(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

void AddFloatInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                         float scale, float offset) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) t->add_float_data(InitializerValue(i, scale, offset));
}

void AddInt64Initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

void AddIntsAttribute(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void AddIntAttribute(onnx::NodeProto* n, const std::string& name, int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void SetFloatType(onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* AddInferenceBatchNorm(onnx::GraphProto* g, const std::string& name, const std::string& x,
                                       const std::string& y, int64_t channels) {
  AddFloatInitializer(g, name + "_scale", {channels}, 0.1f, 1.f);
  AddFloatInitializer(g, name + "_shift", {channels}, 0.03f);
  AddFloatInitializer(g, name + "_mean", {channels}, 0.02f);
  AddFloatInitializer(g, name + "_var", {channels}, 0.05f, 0.5f);
  return AddNode(g, "BatchNormalization", name, {x, name + "_scale", name + "_shift", name + "_mean", name + "_var"},
                 {y});
}

onnx::NodeProto* AddPaddedConv(onnx::GraphProto* g, const std::string& name, std::vector<std::string> inputs,
                               const std::string& y, int64_t pad) {
  auto* n = AddNode(g, "Conv", name, std::move(inputs), {y});
  AddIntsAttribute(n, "pads", {pad, pad, pad, pad});
  return n;
}

namespace {
absl::StatusOr<Graph> ImportProto(const onnx::ModelProto& model) {
  const std::string bytes = Serialize(model);
  auto g = ImportModelBuffer(bytes.data(), bytes.size(), "", model.graph().name());
  EXPECT_TRUE(g.ok()) << g.status();
  return g;
}
}  // namespace

Graph ImportTestModel(const onnx::ModelProto& model) {
  auto g = ImportProto(model);
  return g.ok() ? std::move(*g) : Graph{};
}

std::unique_ptr<Session> LoadTestModel(const onnx::ModelProto& model, bool fusion) {
  auto g = ImportProto(model);
  if (!g.ok()) return nullptr;
  SessionOptions o;
  o.num_threads = 2;
  o.fusion = fusion;
  auto s = Session::FromGraph(*std::move(g), o);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes) ++counts[n.op_type];
  return counts;
}

void ExpectSameOutputs(Session& a, Session& b, const Dims& x_dims) {
  Tensor x = Tensor::Host(DataType::kFloat, x_dims);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i));
  auto ya = a.Run({{"x", x}});
  auto yb = b.Run({{"x", x}});
  ASSERT_TRUE(ya.ok()) << ya.status();
  ASSERT_TRUE(yb.ok()) << yb.status();
  ASSERT_EQ(ya->size(), yb->size());
  for (size_t k = 0; k < ya->size(); ++k) {
    const Tensor& ta = (*ya)[k];
    const Tensor& tb = (*yb)[k];
    ASSERT_EQ(ta.dims(), tb.dims()) << "output " << k;
    float largest = 0;
    for (int64_t i = 0; i < tb.numel(); ++i) largest = std::max(largest, std::abs(tb.data<float>()[i]));
    EXPECT_GT(largest, 1e-3f) << "output " << k << " is all near zero: the test would not see errors";
    for (int64_t i = 0; i < ta.numel(); ++i)
      ASSERT_NEAR(ta.data<float>()[i], tb.data<float>()[i], 1e-5f * std::max(1.f, largest))
          << "output " << k << " at " << i;
  }
}

std::string MakeTempDir(const std::string& tag) {
  static RemoveAtExit made;  // the folders, with what the tests put in them
  const char* base = getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/tandem_" + tag + "_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror(("MakeTempDir: mkdtemp " + tmpl).c_str());
    std::abort();
  }
  made.Add(buf.data());
  return buf.data();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

Node PlainNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  Node n;
  n.name = outputs.at(0);
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

Graph TandemOpGraph(const std::string& op, const std::vector<ValueInfo>& inputs,
                    const std::vector<std::string>& outputs) {
  Graph g;
  g.name = op;
  g.opsets[""] = 17;
  g.opsets["ai.tandem"] = 1;
  Node n;
  n.name = op;
  n.op_type = op;
  n.domain = "ai.tandem";
  for (const ValueInfo& vi : inputs) n.inputs.push_back(vi.name);
  n.outputs = outputs;
  g.inputs = inputs;
  g.nodes.push_back(n);
  for (const std::string& o : outputs) g.outputs.push_back(ValueInfo{o, DataType::kUndefined, Shape::Unknown()});
  return g;
}

std::vector<double> StepLosses(training::Trainer& trainer, const std::string& input, const Tensor& x,
                               const Tensor& y, int steps) {
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    auto l = trainer.Step({{input, x}}, y);
    EXPECT_TRUE(l.ok()) << l.status();
    if (!l.ok()) break;
    losses.push_back(*l);
  }
  return losses;
}

}  // namespace tandem::testing
