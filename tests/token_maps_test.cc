// Tokens read as channels-last maps (providers/cpu/rewrites/token_maps.h): SegFormer's
// Mix-FFN, tokens -> Transpose -> Reshape -> depthwise convolution -> Reshape -> Transpose
// back, loses both transposes with the channels-last layout and gives the outputs of the
// same graph run plain (fusion off); with channel blocks they stay.
#include <gtest/gtest.h>

#include "runtime/session.h"
#include "tests/scoped_env.h"
#include "tests/test_models.h"

namespace tandem {
namespace {

using namespace tandem::testing;

// x[1,64,16] (tokens of an 8x8 map) -> Transpose(0,2,1) -> Reshape [1,16,8,8] = m ->
// depthwise Conv 3x3 pad 1 = c -> Reshape [1,16,64] -> Transpose(0,2,1) = y [1,64,16].
onnx::ModelProto MixFfnModel() {
  onnx::ModelProto m = EmptyModel(13, "mix_ffn");
  auto* g = m.mutable_graph();
  SetFloatType(g->add_input(), "x", {1, 64, 16});
  AddFloatInitializer(g, "w", {16, 1, 3, 3}, 0.1f);
  AddInt64Initializer(g, "map_shape", {1, 16, 8, 8});
  AddInt64Initializer(g, "token_shape", {1, 16, 64});
  AddIntsAttribute(AddNode(g, "Transpose", "to_channels", {"x"}, {"t"}), "perm", {0, 2, 1});
  AddNode(g, "Reshape", "to_map", {"t", "map_shape"}, {"m"});
  AddIntAttribute(AddPaddedConv(g, "dwconv", {"m", "w"}, "c", 1), "group", 16);
  AddNode(g, "Reshape", "to_rows", {"c", "token_shape"}, {"r"});
  AddIntsAttribute(AddNode(g, "Transpose", "to_tokens", {"r"}, {"y"}), "perm", {0, 2, 1});
  SetFloatType(g->add_output(), "y", {1, 64, 16});
  return m;
}

TEST(TokenMaps, MixFfnReadsTokensAsChannelsLast) {
  for (const char* layout : {"nhwc", "nChw16c"}) {
    SCOPED_TRACE(layout);
    const ScopedEnv env("TANDEM_CPU_CONV_LAYOUT", layout);
    auto fused = LoadTestModel(MixFfnModel(), true), plain = LoadTestModel(MixFfnModel(), false);
    ASSERT_TRUE(fused && plain);
    const std::map<std::string, int> ops = OpCounts(fused->graph());
    const bool channels_last = std::string(layout) == "nhwc";
    EXPECT_EQ(ops.count("Transpose") ? ops.at("Transpose") : 0, channels_last ? 0 : 2);
    EXPECT_EQ(ops.count("FromBlocked") ? ops.at("FromBlocked") : 0, channels_last ? 0 : 1);
    ExpectSameOutputs(*fused, *plain, {1, 64, 16});
  }
}

}  // namespace
}  // namespace tandem
