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
