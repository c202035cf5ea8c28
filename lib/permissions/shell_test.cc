#include "lib/permissions/shell.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

TEST(SplitCommandTest, OneCommand) {
  CommandSplit split = SplitCommand("  git status --short ");
  EXPECT_TRUE(split.complete);
  EXPECT_THAT(split.parts, ElementsAre("git status --short"));
}

TEST(SplitCommandTest, Separators) {
  CommandSplit split = SplitCommand("a && b || c; d | e |& f & g\nh");
  EXPECT_TRUE(split.complete) << split.reason;
  EXPECT_THAT(split.parts, ElementsAre("a", "b", "c", "d", "e", "f", "g", "h"));
}

TEST(SplitCommandTest, QuotesKeepSeparators) {
  CommandSplit split = SplitCommand(R"(echo 'a && b' "c; d" e\;f)");
  EXPECT_TRUE(split.complete);
  EXPECT_THAT(split.parts, ElementsAre(R"(echo 'a && b' "c; d" e\;f)"));
}

TEST(SplitCommandTest, SubstitutionsAreParts) {
  CommandSplit split = SplitCommand("echo $(rm -rf x; ls) `id`");
  EXPECT_TRUE(split.complete) << split.reason;
  EXPECT_THAT(split.parts, UnorderedElementsAre("echo $(rm -rf x; ls) `id`",
                                                "rm -rf x", "ls", "id"));
}

TEST(SplitCommandTest, SubstitutionInDoubleQuotes) {
  CommandSplit split = SplitCommand(R"(echo "now: $(date) `whoami`")");
  EXPECT_TRUE(split.complete) << split.reason;
  EXPECT_THAT(split.parts,
              UnorderedElementsAre(R"(echo "now: $(date) `whoami`")", "date",
                                   "whoami"));
}

TEST(SplitCommandTest, HarmlessRedirections) {
  CommandSplit split = SplitCommand("make 2>&1 >/dev/null && x 2> /dev/null");
  EXPECT_TRUE(split.complete) << split.reason;
  EXPECT_THAT(split.parts,
              ElementsAre("make 2>&1 >/dev/null", "x 2> /dev/null"));
}

TEST(SplitCommandTest, WhatCannotBeSplit) {
  for (const char* command :
       {"git status > out.txt", "echo x >> ~/.bashrc", "cat < f",
        "cat <<EOF\nx\nEOF", "diff <(ls) b", "(cd x; rm y)", "{ rm y; }",
        "echo 'open", "echo \"open", "echo $(open", "echo `open",
        "echo $((1+2))", "ls >/dev/nullx", "a &>file",
        // bash ends the comment at the newline, so the quote never opens.
        "echo # '\nrm -rf x #'", "#x"}) {
    CommandSplit split = SplitCommand(command);
    EXPECT_FALSE(split.complete) << command;
    EXPECT_FALSE(split.reason.empty()) << command;
  }
}

TEST(SplitCommandTest, HashInsideAWordIsText) {
  CommandSplit split = SplitCommand("git log --format=%h#1 && echo a#b");
  EXPECT_TRUE(split.complete) << split.reason;
  EXPECT_THAT(split.parts, ElementsAre("git log --format=%h#1", "echo a#b"));
}

TEST(SplitCommandTest, BraceInsideAWordIsText) {
  CommandSplit split = SplitCommand("git log --format={x}");
  EXPECT_TRUE(split.complete) << split.reason;
  EXPECT_THAT(split.parts, ElementsAre("git log --format={x}"));
}

}  // namespace
}  // namespace garuda
