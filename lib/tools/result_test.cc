#include "lib/tools/result.h"

#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(CapToolResultTest, ShortResultUnchanged) {
  EXPECT_EQ(CapToolResult("abc"), "abc");
  std::string exact(kToolResultLimit, 'x');
  EXPECT_EQ(CapToolResult(exact), exact);
}

TEST(CapToolResultTest, LongResultCutWithFinalLine) {
  std::string text(kToolResultLimit + 250, 'x');
  std::string capped = CapToolResult(text);
  EXPECT_EQ(capped.substr(0, kToolResultLimit),
            text.substr(0, kToolResultLimit));
  size_t last = capped.rfind('\n');
  ASSERT_NE(last, std::string::npos);
  EXPECT_EQ(last, kToolResultLimit);
  std::string line = capped.substr(last + 1);
  EXPECT_NE(line.find("result cut"), std::string::npos) << line;
  EXPECT_NE(line.find("250 characters left out"), std::string::npos) << line;
}

TEST(CapToolResultTest, NeverSplitsACharacter) {
  std::string text = "ab\xc3\xa9\xc3\xa9";  // "abéé"
  std::string capped = CapToolResult(text, 3);
  EXPECT_EQ(capped.substr(0, 3), "ab\n");
  EXPECT_NE(capped.find("4 characters left out"), std::string::npos) << capped;
}

}  // namespace
}  // namespace garuda
