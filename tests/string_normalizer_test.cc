// StringNormalizer (providers/cpu/kernels/ml/text_ops.cc) on UTF-8 beyond ASCII and on
// bytes that are not UTF-8: a string the kernel has to case-map must be valid UTF-8, or it
// is refused naming the element and the byte, as ONNX Runtime refuses it (issue 71).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/gemm_test_util.h"

namespace tandem {
namespace {

absl::StatusOr<std::vector<std::string>> Normalize(const std::vector<std::string>& words, const std::string& action,
                                                   const std::vector<std::string>& stopwords = {}) {
  Node n;
  n.name = "normalize";
  n.op_type = "StringNormalizer";
  n.inputs = {"x"};
  n.outputs = {"y"};
  n.attributes["case_change_action"] = StringAttribute(action);
  if (!stopwords.empty()) {
    Attribute words;
    words.kind = Attribute::Kind::kStrings;
    words.strings = stopwords;
    n.attributes["stopwords"] = words;
  }
  Graph g;
  g.name = "normalizer";
  g.opsets[""] = 17;
  g.inputs = {ValueInfo{"x", DataType::kString, Shape::Unknown()}};
  g.nodes = {n};
  g.outputs = {ValueInfo{"y", DataType::kString, Shape::Unknown()}};
  auto s = CpuSession(g);
  if (!s) return absl::InternalError("no session");
  Tensor x = Tensor::Host(DataType::kString, {static_cast<int64_t>(words.size())});
  for (size_t i = 0; i < words.size(); ++i) x.data<std::string>()[i] = words[i];
  auto out = s->Run({{"x", x}});
  if (!out.ok()) return out.status();
  const Tensor& y = (*out)[0];
  return std::vector<std::string>(y.data<std::string>(), y.data<std::string>() + y.numel());
}

TEST(StringNormalizer, CaseMapsUtf8BeyondAscii) {
  auto y = Normalize({"\xC3\x80ngstr\xC3\xB6m", "STRASSE", "\xCE\xA3\xCE\xB9"}, "LOWER");  // Àngström, Σι
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, (std::vector<std::string>{"\xC3\xA0ngstr\xC3\xB6m", "strasse", "\xCF\x83\xCE\xB9"}));
  auto stop = Normalize({"\xC3\x84pfel", "und", "Birnen"}, "NONE", {"\xC3\xA4PFEL", "UND"});  // case-insensitive
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_EQ(*stop, (std::vector<std::string>{"Birnen"}));
}

TEST(StringNormalizer, RefusesBytesThatAreNotUtf8) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"ok\xFF", "byte 0xff at offset 2"},           // never in UTF-8
      {"\x80x", "byte 0x80 at offset 0"},            // a stray continuation byte
      {"ab\xC3", "byte 0xc3 at offset 2"},           // truncated
      {"\xC0\xAF", "byte 0xc0 at offset 0"},         // overlong '/'
      {"\xED\xA0\x80", "byte 0xed at offset 0"}};    // a UTF-16 surrogate
  for (const auto& [word, where] : bad) {
    auto y = Normalize({"fine", word}, "UPPER");
    ASSERT_FALSE(y.ok()) << "accepted '" << word << "'";
    EXPECT_NE(std::string(y.status().message()).find("input 'X' element 1: not valid UTF-8 (" + where + ")"),
              std::string::npos)
        << y.status();
  }
  // Nothing to map: the strings pass through as they are.
  auto same = Normalize({"ok\xFF"}, "NONE");
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, (std::vector<std::string>{"ok\xFF"}));
}

}  // namespace
}  // namespace tandem
