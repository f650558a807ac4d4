// What `tandem inspect --op NAME|all` and `tandem inspect MODEL` print about ai.tandem ops
// (cli/tandem_op_listing.h): one declaration, all of them with their count, an error that
// names an unknown op and lists the declared ones, and one line per op a graph uses (an
// undeclared one said to be so).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "cli/tandem_op_listing.h"
#include "ops/tandem_ops.h"

namespace tandem {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Lines that start a declaration ("ai.tandem NAME").
size_t Declarations(const std::string& text) { return Count("\n" + text, "\nai.tandem "); }

TEST(TandemOpListing, OneDeclarationAllOfThemOrAnErrorNamingTheOp) {
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(cli::PrintTandemOpDeclarations("Gelu"), 0);
  std::fflush(stdout);
  const std::string one = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(Declarations(one), 1u) << one;
  EXPECT_NE(one.find("ai.tandem Gelu\n"), std::string::npos) << one;
  EXPECT_NE(one.find("approximate"), std::string::npos) << one;

  ::testing::internal::CaptureStdout();
  EXPECT_EQ(cli::PrintTandemOpDeclarations("all"), 0);
  std::fflush(stdout);
  const std::string all = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(Declarations(all), TandemOps().size());
  for (const char* op : {"FusedConv", "FromBlocked", "Gelu", "LayerNormalization", "ReluGrad"})
    EXPECT_NE(all.find(std::string("ai.tandem ") + op + "\n"), std::string::npos) << op;
  EXPECT_NE(all.find(std::to_string(TandemOps().size()) + " ai.tandem ops"), std::string::npos);

  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cli::PrintTandemOpDeclarations("NoSuchOp"), 1);
  const std::string error = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(error.find("'NoSuchOp'"), std::string::npos) << error;
  EXPECT_NE(error.find("FusedConv"), std::string::npos) << error;
}

TEST(TandemOpListing, OpsAGraphUsesOneLineEach) {
  Graph model, placed;
  for (const char* op : {"Gelu", "Gelu", "Bogus"}) {
    Node n;
    n.op_type = op;
    n.domain = kTandemDomain;
    model.nodes.push_back(n);
  }
  Node from_blocked;
  from_blocked.op_type = "FromBlocked";
  from_blocked.domain = kTandemDomain;
  placed.nodes.push_back(from_blocked);
  Node relu;
  relu.op_type = "Relu";  // ONNX's: not listed
  placed.nodes.push_back(relu);
  ::testing::internal::CaptureStdout();
  cli::PrintTandemOpsUsed(model, &placed);
  std::fflush(stdout);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(Count(out, "\n  "), 3u) << out;  // Bogus, FromBlocked, Gelu
  EXPECT_NE(out.find("Bogus"), std::string::npos);
  EXPECT_NE(out.find("Tandem declares no such op"), std::string::npos) << out;
  EXPECT_EQ(out.find("Relu"), std::string::npos) << out;

  ::testing::internal::CaptureStdout();
  cli::PrintTandemOpsUsed(Graph{}, nullptr);
  std::fflush(stdout);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace tandem
