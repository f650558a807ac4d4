// Export: a model imported, exported and imported again computes the same outputs, and
// the exported file passes libonnx's checker.
#include <gtest/gtest.h>

#include <onnx/checker.h>

#include "onnx_import/export.h"
#include "onnx_import/import.h"
#include "runtime/session.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

TEST(Export, RoundTripKeepsOutputs) {
  std::string src = std::string(TANDEM_SOURCE_DIR) + "/models/fashion_cnn.onnx";
  auto g = ImportModelFile(src);
  ASSERT_TRUE(g.ok()) << g.status();
  std::string dir = testing::MakeTempDir("export");
  std::string out = dir + "/roundtrip.onnx";
  ASSERT_TRUE(ExportModelFile(*g, out).ok());
  EXPECT_NO_THROW(onnx::checker::check_model(out));

  Tensor x = Tensor::Host(DataType::kFloat, {2, 1, 28, 28});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 37) % 101) / 101.f;
  auto a = Session::Load(src), b = Session::Load(out);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ya = (*a)->Run({{"x", x}}), yb = (*b)->Run({{"x", x}});
  ASSERT_TRUE(ya.ok() && yb.ok());
  ASSERT_EQ((*ya)[0].dims(), (*yb)[0].dims());
  for (int64_t i = 0; i < (*ya)[0].numel(); ++i)
    EXPECT_EQ((*ya)[0].data<float>()[i], (*yb)[0].data<float>()[i]);
}

// A model's Constant nodes are values, not parameters: they are exported as Constant
// nodes again, so a converted or trained-and-exported model trains the same parameters.
TEST(Export, ConstantNodesStayConstants) {
  onnx::ModelProto m = testing::EmptyModel(13, "constants");
  auto* g = m.mutable_graph();
  testing::SetFloatType(g->add_input(), "x", {2, 3});
  testing::AddFloatInitializer(g, "w", {3}, 0.5f);
  auto* c = testing::AddNode(g, "Constant", "eps", {}, {"eps"});
  auto* value = c->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_float_data(1e-3f);
  testing::AddNode(g, "Mul", "scale", {"x", "w"}, {"s"});
  testing::AddNode(g, "Add", "shift", {"s", "eps"}, {"y"});
  testing::SetFloatType(g->add_output(), "y", {2, 3});
  const std::string bytes = testing::Serialize(m);
  auto imported = ImportModelBuffer(bytes.data(), bytes.size(), "", "constants");
  ASSERT_TRUE(imported.ok()) << imported.status();
  auto exported = ExportModel(*imported);
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->graph().initializer_size(), 1);
  EXPECT_EQ(exported->graph().initializer(0).name(), "w");
  const std::string again = exported->SerializeAsString();
  auto reimported = ImportModelBuffer(again.data(), again.size(), "", "constants again");
  ASSERT_TRUE(reimported.ok()) << reimported.status();
  EXPECT_EQ(reimported->constants, std::set<std::string>{"eps"});
}

TEST(Export, RefusesInternalOps) {
  Graph g;
  g.opsets[""] = 13;
  Node n;
  n.op_type = "ReluGrad";
  n.domain = "ai.tandem";
  n.name = "internal";
  g.nodes.push_back(n);
  auto m = ExportModel(g);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("Tandem-internal"), std::string::npos);
}

}  // namespace
}  // namespace tandem
