// cli/lib/output_file_names.h: names a model gives its outputs become file names that stay
// in the folder the user named (issue 71 case 1: an output called "../../x").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/lib/output_file_names.h"

namespace tandem::cli {
namespace {

std::vector<std::string> Files(const std::vector<std::string>& names) {
  std::vector<std::string> files;
  for (const OutputFileName& f : OutputFileNames(names, ".npy")) files.push_back(f.file);
  return files;
}

TEST(OutputFileNames, PlainNamesStayAsTheyAre) {
  auto out = OutputFileNames({"logits", "present.0.key", "y"}, ".npy");
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].file, "logits.npy");
  EXPECT_EQ(out[1].file, "present.0.key.npy");
  for (const OutputFileName& f : out) EXPECT_FALSE(f.changed) << f.file;
}

TEST(OutputFileNames, NoNameLeavesTheFolder) {
  EXPECT_EQ(Files({"../../x", "/etc/passwd", "a\\b", "..", ".", "", ".hidden", std::string("a\0b", 3), "x\ny"}),
            (std::vector<std::string>{"_.._.._x.npy", "_etc_passwd.npy", "a_b.npy", "_...npy", "_..npy", "_.npy",
                                      "_.hidden.npy", "a_b_2.npy", "x_y.npy"}));
  for (const OutputFileName& f : OutputFileNames({"../../x", ""}, ".npy")) {
    EXPECT_TRUE(f.changed);
    EXPECT_EQ(f.file.find('/'), std::string::npos);
  }
}

TEST(OutputFileNames, NamesThatMeetAreNumbered) {
  EXPECT_EQ(Files({"a/b", "a_b", "a:b", "a_b"}),
            (std::vector<std::string>{"a_b.npy", "a_b_2.npy", "a:b.npy", "a_b_3.npy"}));
}

TEST(OutputFileNames, LongNamesAreCutAndStayDistinct) {
  const std::string a(300, 'a'), b = std::string(299, 'a') + "b";
  auto files = Files({a, b, std::string(150, 'x') + std::string(100, '\xc3') + "\xa9"});
  for (const std::string& f : files) EXPECT_LE(f.size(), kMaxFileNameBytes + 4) << f;
  EXPECT_NE(files[0], files[1]);
  EXPECT_EQ(files[0].substr(0, 10), "aaaaaaaaaa");
}

}  // namespace
}  // namespace tandem::cli
