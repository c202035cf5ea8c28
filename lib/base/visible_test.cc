#include "lib/base/visible.h"

#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(MakeVisibleTest, ShowsHiddenCharacters) {
  int marks = 0;
  EXPECT_EQ(MakeVisible("a\x1b[31mb", &marks), "a\\e[31mb");
  EXPECT_EQ(MakeVisible("x\xe2\x80\xae"
                        "y"),
            "x<U+202E>y");  // RLO
  EXPECT_EQ(MakeVisible("x\xe2\x81\xa6"
                        "y"),
            "x<U+2066>y");  // LRI
  EXPECT_EQ(MakeVisible("zero\xe2\x80\x8bwidth"), "zero<U+200B>width");
  EXPECT_EQ(MakeVisible("\xef\xbb\xbf"
                        "bom"),
            "<U+FEFF>bom");
  EXPECT_EQ(MakeVisible("bad\xff"), "bad\\xff");
  EXPECT_EQ(MakeVisible("a\nb\r"), "a\\nb\\r");
  EXPECT_EQ(MakeVisible("\xc2\x85"), "<U+0085>");  // C1 NEL
  EXPECT_EQ(MakeVisible("caf\xc3\xa9 \xe6\x97\xa5"),
            "caf\xc3\xa9 \xe6\x97\xa5");
  EXPECT_EQ(marks, 1);
}

TEST(MakeVisibleTest, MarksCannotBeForged) {
  // A literal backslash sequence in the text is doubled, so it cannot pose
  // as a mark (or hide one).
  EXPECT_EQ(MakeVisible("\\x41"), "\\\\x41");
}

TEST(MakeVisibleTest, OverlongAndSurrogatesAreInvalid) {
  EXPECT_EQ(MakeVisible("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(MakeVisible("\xed\xa0\x80"), "\\xed\\xa0\\x80");
}

TEST(VisiblePathTest, QuotesOddNames) {
  EXPECT_EQ(VisiblePath("src/a.c"), "src/a.c");
  EXPECT_EQ(VisiblePath("my file"), "\"my file\"");
  EXPECT_EQ(VisiblePath("a\nb"), "\"a\\nb\"");
}

TEST(VisibleTest, MessagesKeepTheirBackslashesAndFilterOnce) {
  const std::string raw = "write \\n here; \x1b]0;title\x07 \xe2\x80\xae";
  std::string once = MakeMessageVisible(raw);
  EXPECT_EQ(once, "write \\n here; \\e]0;title\\x07 <U+202E>");
  EXPECT_EQ(MakeMessageVisible(once), once);
  // Control: MakeVisible doubles the backslash (its marks cannot be forged).
  EXPECT_EQ(MakeVisible("\\n"), "\\\\n");
}

}  // namespace
}  // namespace garuda
