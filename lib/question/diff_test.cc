#include "lib/question/diff.h"

#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(DiffLinesTest, UnifiedHunkWithCounts) {
  LineDiff diff = DiffLines("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
  EXPECT_EQ(diff.added, 2);
  EXPECT_EQ(diff.removed, 1);
  EXPECT_EQ(diff.hunks, "@@ -1,4 +1,5 @@\n a\n-b\n+B\n c\n d\n+e\n");
}

TEST(DiffLinesTest, FarApartChangesMakeTwoHunks) {
  std::string old_text, new_text;
  for (int i = 0; i < 30; ++i) {
    old_text += std::to_string(i) + "\n";
    new_text += (i == 2 || i == 25 ? "x" : std::to_string(i)) + "\n";
  }
  LineDiff diff = DiffLines(old_text, new_text);
  EXPECT_EQ(diff.added, 2);
  EXPECT_EQ(diff.removed, 2);
  EXPECT_NE(diff.hunks.find("@@ -1,6 +1,6 @@"), std::string::npos)
      << diff.hunks;
  EXPECT_NE(diff.hunks.find("@@ -23,7 +23,7 @@"), std::string::npos)
      << diff.hunks;
}

TEST(DiffLinesTest, HiddenCharactersAreMarked) {
  LineDiff diff = DiffLines("ok\n", "ok\nif (admin\xe2\x80\xae) {}\n");
  EXPECT_EQ(diff.hidden_marks, 1);
  EXPECT_NE(diff.hunks.find("+if (admin<U+202E>) {}"), std::string::npos);
}

TEST(DiffLinesTest, NewFileAndDeletedFile) {
  EXPECT_EQ(DiffLines("", "x\ny\n").hunks, "@@ -0,0 +1,2 @@\n+x\n+y\n");
  EXPECT_EQ(DiffLines("x\n", "").hunks, "@@ -1,1 +0,0 @@\n-x\n");
  EXPECT_EQ(DiffLines("x", "y").hunks,
            "@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+y\n"
            "\\ No newline at end of file\n");
}

TEST(LooksBinaryTest, NulMeansBinary) {
  EXPECT_TRUE(LooksBinary(std::string("ab\0cd", 5)));
  EXPECT_FALSE(LooksBinary("plain text\n"));
}

}  // namespace
}  // namespace garuda
