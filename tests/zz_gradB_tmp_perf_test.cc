#include <gtest/gtest.h>
#include <chrono>
#include "runtime/session.h"
#include "tests/gradient_check.h"
namespace tandem::testing {
namespace {
double TimeNode(const std::string& op, const std::string& domain, std::vector<Tensor> in,
                std::map<std::string, Attribute> attrs, int nout) {
  Graph g; g.opsets[""] = 17; g.opsets["ai.tandem"] = 1;
  Node n; n.name = "n"; n.op_type = op; n.domain = domain; n.attributes = attrs;
  std::map<std::string, Tensor> feeds;
  for (size_t i = 0; i < in.size(); ++i) { std::string nm = "i" + std::to_string(i);
    g.inputs.push_back(ValueInfo{nm, in[i].dtype(), Shape::Of(in[i].dims())}); feeds[nm] = in[i]; n.inputs.push_back(nm); }
  for (int o = 0; o < nout; ++o) { n.outputs.push_back("o" + std::to_string(o)); g.outputs.push_back(ValueInfo{n.outputs.back(), DataType::kUndefined, Shape::Unknown()}); }
  g.nodes.push_back(n);
  SessionOptions opt; opt.constant_folding = false;
  auto s = Session::FromGraph(g, opt); EXPECT_TRUE(s.ok()) << s.status();
  auto r = (*s)->Run(feeds); EXPECT_TRUE(r.ok()) << r.status();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) (*s)->Run(feeds).IgnoreError();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 5;
}
Tensor F(Dims d, unsigned s) { return RandomDoubles(d, s).CastTo(DataType::kFloat); }
TEST(ZzGradBPerf, Times) {
  std::map<std::string, Attribute> ca = {{"pads", IntsAttr({1,1,1,1})}};
  printf("Conv fwd       %.2f ms\n", TimeNode("Conv", "", {F({8,64,56,56},1), F({64,64,3,3},2)}, ca, 1));
  printf("ConvGrad       %.2f ms\n", TimeNode("ConvGrad", "ai.tandem", {F({8,64,56,56},3), F({8,64,56,56},1), F({64,64,3,3},2)}, ca, 3));
  std::map<std::string, Attribute> pa = {{"kernel_shape", IntsAttr({3,3})}, {"strides", IntsAttr({2,2})}, {"pads", IntsAttr({1,1,1,1})}};
  printf("MaxPool fwd    %.2f ms\n", TimeNode("MaxPool", "", {F({8,64,112,112},1)}, pa, 1));
  printf("MaxPoolGrad    %.2f ms\n", TimeNode("MaxPoolGrad", "ai.tandem", {F({8,64,56,56},3), F({8,64,112,112},1)}, pa, 1));
  std::map<std::string, Attribute> ba = {{"training_mode", IntAttr(1)}};
  printf("BN train fwd   %.2f ms\n", TimeNode("BatchNormalization", "", {F({8,64,56,56},1), F({64},2), F({64},3), F({64},4), RandomDoubles({64},5,0.5,1).CastTo(DataType::kFloat)}, ba, 3));
  printf("BNGrad         %.2f ms\n", TimeNode("BatchNormalizationGrad", "ai.tandem", {F({8,64,56,56},3), F({8,64,56,56},1), F({64},2)}, ba, 3));
  printf("LNGrad         %.2f ms\n", TimeNode("LayerNormalizationGrad", "ai.tandem", {F({64,128,768},3), F({64,128,768},1), F({768},2)}, {}, 3));
}
}  // namespace
}  // namespace tandem::testing
