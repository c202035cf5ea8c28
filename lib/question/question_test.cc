#include "lib/question/question.h"

#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

ChangeSet OneFile(const std::string& content) {
  ChangeSet change_set;
  change_set.header.set_command("sed -i s/a/b/ x");
  change_set.changes.push_back(testing::AddedFile("x", content));
  return change_set;
}

// Answers `typed` to the question; returns the answer and what was shown.
std::pair<Answer, std::string> AskWith(const ChangeSet& change_set,
                                       const std::string& typed) {
  int in[2], out[2];
  EXPECT_EQ(::pipe(in), 0);
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_TRUE(WriteAll(in[1], typed).ok());
  ::close(in[1]);
  Rendered rendered = RenderChangeSet(change_set, -1);
  Answer answer = Ask(change_set, rendered, in[0], out[1]);
  ::close(out[1]);
  ::close(in[0]);
  std::string shown = *ReadAll(out[0]);
  ::close(out[0]);
  return {answer, shown};
}

TEST(AskTest, ApplyDiscardViewAndEnd) {
  ChangeSet change_set = OneFile("hello\n");
  EXPECT_EQ(AskWith(change_set, "a\n").first, Answer::kApply);
  EXPECT_EQ(AskWith(change_set, "d\n").first, Answer::kDiscard);
  EXPECT_EQ(AskWith(change_set, "").first, Answer::kDiscard);  // EOF
  EXPECT_EQ(AskWith(change_set, "a").first,
            Answer::kDiscard);  // no newline: EOF
  auto [answer, shown] = AskWith(change_set, "v\nyes\napply\n");
  EXPECT_EQ(answer, Answer::kApply);
  EXPECT_NE(shown.find("+hello"), std::string::npos);
}

TEST(AskTest, IncompleteListOffersDiscardOnly) {
  ChangeSet change_set = OneFile("hello\n");
  change_set.summary.set_incomplete(true);
  change_set.summary.set_incomplete_reason("the walk passed the limit");
  auto [answer, shown] = AskWith(change_set, "a\napply\n");
  EXPECT_EQ(answer, Answer::kDiscard);
  EXPECT_NE(shown.find("apply is not offered"), std::string::npos);
  EXPECT_EQ(shown.find("[a]pply"), std::string::npos);
  // Negative control: the same list, complete, can be applied.
  change_set.summary.set_incomplete(false);
  EXPECT_EQ(AskWith(change_set, "a\n").first, Answer::kApply);
}

TEST(RenderTest, CutsTheDiffButNeverTheFileList) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
  ChangeSet change_set = OneFile(big);
  Change second = change_set.changes[0];
  second.entry.set_path("zz last file");
  change_set.changes.push_back(second);
  Rendered rendered = RenderChangeSet(change_set, -1);
  EXPECT_TRUE(rendered.cut);
  EXPECT_LE(rendered.diff.size(), kQuestionDiffLimit + 200);
  EXPECT_NE(rendered.diff.find("diff cut at 60000"), std::string::npos);
  EXPECT_NE(rendered.summary.find("\"zz last file\""), std::string::npos);
  EXPECT_NE(rendered.summary.find("+20000 -0"), std::string::npos);
  EXPECT_GT(rendered.full_diff.size(), rendered.diff.size());
}

TEST(RenderTest, ShowsSensitiveIgnoredAndCounts) {
  ChangeSet change_set = OneFile("x\n");
  change_set.summary.add_sensitive_ignored(".env");
  IgnoredCount* count = change_set.summary.add_ignored();
  count->set_folder("build/");
  count->set_files(212);
  Rendered rendered = RenderChangeSet(change_set, -1);
  EXPECT_NE(rendered.summary.find("  .env\n"), std::string::npos);
  EXPECT_NE(rendered.summary.find("build/: 212 files"), std::string::npos);
}

}  // namespace
}  // namespace garuda
