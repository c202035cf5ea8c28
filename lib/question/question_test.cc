#include "lib/question/question.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/test_tree.h"
#include "lib/question/answer_reader.h"
#include "lib/question/choice.h"
#include "lib/question/keys.h"
#include "lib/question/pager.h"
#include "lib/question/screen.h"

namespace garuda {
namespace {

ChangeSet OneFile(const std::string& content) {
  ChangeSet change_set;
  change_set.header.set_command("sed -i s/a/b/ x");
  change_set.changes.push_back(testing::AddedFile("x", content));
  return change_set;
}

// Runs `ask` with `typed` on its input pipe; what it wrote.
std::string Typed(const std::string& typed,
                  const std::function<void(int in, int out)>& ask) {
  int in[2], out[2];
  EXPECT_EQ(::pipe(in), 0);
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_TRUE(WriteAll(in[1], typed).ok());
  ::close(in[1]);
  ask(in[0], out[1]);
  ::close(out[1]);
  ::close(in[0]);
  std::string shown = *ReadAll(out[0]);
  ::close(out[0]);
  return shown;
}

// Answers `typed` to the question; returns the answer and what was shown.
std::pair<Answer, std::string> AskWith(const ChangeSet& change_set,
                                       const std::string& typed) {
  Answer answer = Answer::kDiscard;
  std::string shown = Typed(typed, [&](int in, int out) {
    answer = Ask(change_set, RenderChangeSet(change_set, -1), in, out);
  });
  return {answer, shown};
}

TEST(AskTest, ApplyDiscardViewAndEnd) {
  ChangeSet change_set = OneFile("hello\n");
  EXPECT_EQ(AskWith(change_set, "a\n").first, Answer::kApply);
  EXPECT_EQ(AskWith(change_set, "d\n").first, Answer::kDiscard);
  EXPECT_EQ(AskWith(change_set, "").first, Answer::kDiscard);  // EOF
  EXPECT_EQ(AskWith(change_set, "a").first,
            Answer::kDiscard);  // no newline: EOF
  // View, then q leaves the pager; "yes" is no answer here.
  auto [answer, shown] = AskWith(change_set, "v\nq\nyes\napply\n");
  EXPECT_EQ(answer, Answer::kApply);
  EXPECT_NE(shown.find("+hello"), std::string::npos);
}

TEST(AskTest, IncompleteListOffersDiscardOnly) {
  ChangeSet change_set = OneFile("hello\n");
  change_set.summary.set_incomplete(true);
  change_set.summary.set_incomplete_reason("the walk passed the limit");
  auto [answer, shown] = AskWith(change_set, "a\napply\n");
  EXPECT_EQ(answer, Answer::kDiscard);
  EXPECT_NE(shown.find("Apply is not offered: [d]iscard, [v]iew: "),
            std::string::npos);
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

Change Entry(const std::string& path, ChangeKind kind, FileType base,
             FileType now) {
  Change change;
  change.entry.set_path(path);
  change.entry.set_kind(kind);
  change.entry.mutable_base()->set_type(base);
  change.entry.set_new_type(now);
  return change;
}

TEST(KeysTest, EveryKeyAndWordHasOneMeaning) {
  std::set<char> keys;
  std::set<std::string> words;
  for (const KeyMeaning& meaning : kQuestionKeys) {
    EXPECT_TRUE(keys.insert(meaning.key).second) << meaning.key;
    EXPECT_TRUE(words.insert(meaning.word).second) << meaning.word;
    EXPECT_EQ(meaning.word[0], meaning.key) << meaning.word;
  }
  EXPECT_EQ(KeyPrompt({'a', 'd', 'c', 'v'}),
            "[a]pply, [d]iscard, [c]hoose files, [v]iew");
  EXPECT_EQ(KeyOfWord(" Apply ", {'a', 'd'}), 'a');
  EXPECT_EQ(KeyOfWord("a", {'y', 'n'}), 0);  // not offered: no answer
  EXPECT_EQ(KeyOfWord("always", {'y', 's', 'n'}), 0);
}

TEST(ChooseChangesTest, TheChosenSubsetIsMadeWhole) {
  ChangeSet change_set;
  change_set.changes.push_back(
      Entry("new", CHANGE_KIND_ADDED, FILE_TYPE_ABSENT, FILE_TYPE_DIRECTORY));
  change_set.changes.push_back(
      Entry("new/x.c", CHANGE_KIND_ADDED, FILE_TYPE_ABSENT, FILE_TYPE_REGULAR));
  change_set.changes.push_back(
      Entry("old", CHANGE_KIND_DELETED, FILE_TYPE_DIRECTORY, FILE_TYPE_ABSENT));
  change_set.changes.push_back(Entry("old/y.c", CHANGE_KIND_DELETED,
                                     FILE_TYPE_REGULAR, FILE_TYPE_ABSENT));
  change_set.changes.push_back(
      Entry("z.c", CHANGE_KIND_MODIFIED, FILE_TYPE_REGULAR, FILE_TYPE_REGULAR));
  // new/x.c without its folder, old without its content: both left out.
  Choice choice = ChooseChanges(change_set, {1, 2, 4});
  EXPECT_EQ(choice.applied, std::vector<std::string>({"z.c"}));
  EXPECT_EQ(choice.indices, std::vector<size_t>({4}));
  EXPECT_EQ(choice.left_out.size(), 2u);
  EXPECT_EQ(choice.discarded.size(), 4u);
  EXPECT_EQ(choice.chosen.summary.entries(), 1u);
  // With what they need, they go.
  choice = ChooseChanges(change_set, {0, 1, 2, 3});
  EXPECT_EQ(choice.applied,
            std::vector<std::string>({"new", "new/x.c", "old", "old/y.c"}));
  EXPECT_TRUE(choice.left_out.empty());
  // The totals count folders apart.
  EXPECT_NE(RenderChangeSet(change_set, -1)
                .summary.find("3 files, 2 folders: +0 -0\n"),
            std::string::npos)
      << RenderChangeSet(change_set, -1).summary;
  // A folder's content may go without the folder when it stays.
  choice = ChooseChanges(change_set, {0, 3});
  EXPECT_EQ(choice.applied, std::vector<std::string>({"new", "old/y.c"}));
}

ChangeSet TwoFiles() {
  ChangeSet change_set = OneFile("hello\n");
  change_set.changes.push_back(testing::AddedFile("y", "world\n"));
  return change_set;
}

ChangeAnswer AskTwoWith(const ChangeSet& change_set, const std::string& typed,
                        std::string* shown) {
  ChangeAnswer answer;
  *shown = Typed(typed, [&](int in, int out) {
    answer = AskChanges(change_set, RenderChangeSet(change_set, -1), in, out,
                        AskOptions());
  });
  return answer;
}

TEST(AskChangesTest, ChooseFilesAppliesTheChosenOnes) {
  std::string shown;
  // choose; x: apply; y: view, quit the pager, discard; confirm.
  ChangeAnswer answer = AskTwoWith(TwoFiles(), "c\na\nv\nq\nd\na\n", &shown);
  EXPECT_EQ(answer.answer, Answer::kApply);
  EXPECT_TRUE(answer.some);
  EXPECT_EQ(answer.chosen, std::vector<size_t>({0}));
  EXPECT_NE(shown.find("Change 2 of 2: [a]pply, [d]iscard, [r]est too, [q]uit choosing, "
                       "[v]iew: "),
            std::string::npos);
  EXPECT_NE(shown.find("To apply (1): x\nTo discard (1): y\n"),
            std::string::npos)
      << shown;
  // Choosing every file is all; choosing none is nothing; the end of input
  // in the middle discards all.
  answer = AskTwoWith(TwoFiles(), "c\na\na\na\n", &shown);
  EXPECT_EQ(answer.answer, Answer::kApply);
  EXPECT_FALSE(answer.some);
  EXPECT_EQ(AskTwoWith(TwoFiles(), "c\nd\nd\n", &shown).answer,
            Answer::kDiscard);
  EXPECT_EQ(AskTwoWith(TwoFiles(), "c\na\n", &shown).answer, Answer::kDiscard);
  // r: this file and the rest are applied; q: this file and the rest are
  // discarded (neither asks about the files after it).
  answer = AskTwoWith(TwoFiles(), "c\nr\na\n", &shown);
  EXPECT_EQ(answer.answer, Answer::kApply);
  EXPECT_FALSE(answer.some);
  EXPECT_EQ(shown.find("Change 2 of 2"), std::string::npos) << shown;
  answer = AskTwoWith(TwoFiles(), "c\nd\nr\na\n", &shown);
  EXPECT_EQ(answer.answer, Answer::kApply);
  EXPECT_EQ(answer.chosen, std::vector<size_t>({1}));
  answer = AskTwoWith(TwoFiles(), "c\na\nq\na\n", &shown);
  EXPECT_EQ(answer.answer, Answer::kApply);
  EXPECT_EQ(answer.chosen, std::vector<size_t>({0}));
  EXPECT_NE(shown.find("To apply (1): x\nTo discard (1): y\n"), std::string::npos) << shown;
  EXPECT_EQ(AskTwoWith(TwoFiles(), "c\nq\n", &shown).answer, Answer::kDiscard);
  EXPECT_EQ(shown.find("Change 2 of 2"), std::string::npos) << shown;
  // The confirmation's d discards all.
  EXPECT_EQ(AskTwoWith(TwoFiles(), "c\na\nd\nd\n", &shown).answer,
            Answer::kDiscard);
}

// Ctrl-C in the pager leaves it, and the question then discards. The
// control: q in the pager goes back to the question, which takes "a".
TEST(AskChangesTest, CtrlCInThePagerDiscards) {
  int in[2], out[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::pipe(out), 0);
  ASSERT_TRUE(WriteAll(in[1], "v\n").ok());  // the pipe stays open
  std::thread person([&] {
    std::string seen;
    char buffer[4096];
    while (seen.find("[q] quit") == std::string::npos) {
      ssize_t n = ::read(out[0], buffer, sizeof(buffer));
      if (n <= 0) return;
      seen.append(buffer, static_cast<size_t>(n));
    }
    ::kill(::getpid(), SIGINT);
    while (::read(out[0], buffer, sizeof(buffer)) > 0) {
    }
  });
  ChangeSet change_set = TwoFiles();
  ChangeAnswer answer = AskChanges(change_set, RenderChangeSet(change_set, -1),
                                   in[0], out[1], AskOptions());
  ::close(out[1]);
  person.join();
  ::close(in[1]);
  ::close(in[0]);
  ::close(out[0]);
  EXPECT_EQ(answer.answer, Answer::kDiscard);
  std::string shown;
  EXPECT_EQ(AskTwoWith(TwoFiles(), "v\nq\na\n", &shown).answer, Answer::kApply);
}

TEST(AskChangesTest, ChooseIsNotOfferedForOneFileOrWithoutIt) {
  std::string shown;
  ChangeAnswer answer = AskTwoWith(OneFile("x\n"), "c\n", &shown);
  EXPECT_EQ(answer.answer, Answer::kDiscard);
  EXPECT_EQ(shown.find("[c]hoose"), std::string::npos);
  // Ask (the agent's all-or-nothing question) never offers it.
  EXPECT_EQ(AskWith(TwoFiles(), "c\n").second.find("[c]hoose"),
            std::string::npos);
  // Negative control: two files through AskChanges offer it.
  AskTwoWith(TwoFiles(), "d\n", &shown);
  EXPECT_NE(shown.find("[c]hoose files"), std::string::npos);
}

TEST(RenderTest, SummaryAfterTheDiffWithTotalsAndDevNull) {
  ChangeSet change_set = TwoFiles();
  Change gone;
  gone.entry.set_path("old.txt");
  gone.entry.set_kind(CHANGE_KIND_DELETED);
  gone.entry.mutable_base()->set_type(FILE_TYPE_REGULAR);
  gone.entry.set_new_type(FILE_TYPE_ABSENT);
  change_set.changes.push_back(gone);
  Change binary = testing::AddedFile("logo.png", std::string("\x89PNG\0\0", 6));
  binary.entry.set_sensitive(true);
  change_set.changes.push_back(binary);
  Change mode;
  mode.entry.set_path("run.sh");
  mode.entry.set_kind(CHANGE_KIND_MODE_CHANGED);
  mode.entry.mutable_base()->set_type(FILE_TYPE_REGULAR);
  mode.entry.mutable_base()->set_mode(0644);
  mode.entry.set_new_type(FILE_TYPE_REGULAR);
  mode.entry.set_new_mode(0755);
  change_set.changes.push_back(mode);
  Rendered rendered = RenderChangeSet(change_set, -1);
  EXPECT_NE(rendered.full_diff.find("--- /dev/null\n+++ b/x\n"),
            std::string::npos)
      << rendered.full_diff;
  EXPECT_NE(rendered.summary.find("5 files: +2 -0, 1 binary file, 1 mode "
                                  "change, 1 sensitive name\n"),
            std::string::npos)
      << rendered.summary;
  ASSERT_EQ(rendered.file_lines.size(), 5u);
  EXPECT_EQ(rendered.file_lines[4].rfind("m run.sh  (mode 0644 -> 0755", 0), 0u)
      << rendered.file_lines[4];
  // The summary is the last thing before the prompt.
  std::string shown = AskWith(change_set, "d\n").second;
  EXPECT_LT(shown.find("+++ b/y"), shown.find("The command changed files"));
  EXPECT_LT(shown.find("5 files:"), shown.find("Apply these changes?"));
}

TEST(RenderTest, TheDeletedFileIsDiffedAgainstDevNull) {
  std::string project = testing::NewTempDir("render");
  testing::Write(project + "/gone.txt", "bye\n");
  UniqueFd root(::open(project.c_str(), O_RDONLY | O_DIRECTORY));
  ChangeSet change_set;
  Change gone;
  gone.entry.set_path("gone.txt");
  gone.entry.set_kind(CHANGE_KIND_DELETED);
  gone.entry.mutable_base()->set_type(FILE_TYPE_REGULAR);
  gone.entry.mutable_base()->set_sha256(Sha256Bytes("bye\n"));
  gone.entry.set_new_type(FILE_TYPE_ABSENT);
  change_set.changes.push_back(gone);
  Rendered rendered = RenderChangeSet(change_set, root.get());
  EXPECT_EQ(rendered.full_diff,
            "--- a/gone.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n");
}

TEST(RenderTest, TheTitleIsTheToolLinesText) {
  ChangeSet change_set = OneFile("x\n");
  change_set.header.set_command("printf 'a\\tb' \\\n  > x");
  Rendered rendered = RenderChangeSet(change_set, -1);
  EXPECT_EQ(rendered.summary.substr(0, rendered.summary.find('\n')),
            "The command changed files: printf 'a\\tb' \\   > x");
  EXPECT_EQ(OneLineText(std::string(300, 'x')).size(), 203u);
  EXPECT_EQ(OneLineText("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9...");
}

TEST(RenderTest, TheTitleSaysWhenTheCommandDidNotFinish) {
  ChangeSet change_set = OneFile("x\n");
  change_set.header.set_command("make");
  change_set.header.set_ended_early("timed out: the wall time limit ended it");
  Rendered rendered = RenderChangeSet(change_set, -1);
  EXPECT_EQ(rendered.summary.substr(0, rendered.summary.find('\n')),
            "The command changed files but did not finish (timed out: the wall time limit "
            "ended it), so they may be only part of its work: make");
  change_set.header.clear_command();
  rendered = RenderChangeSet(change_set, -1);
  EXPECT_EQ(rendered.summary.substr(0, rendered.summary.find('\n')),
            "Changed files, by a command that did not finish (timed out: the wall time limit "
            "ended it), so they may be only part of its work:");
}

TEST(ColorTest, DiffLinesAreColouredOnlyWhenAsked) {
  EXPECT_EQ(ColorDiff("+a\n-b\n c\n@@ -1 +1 @@\n"),
            "\x1b[32m+a\x1b[0m\n\x1b[31m-b\x1b[0m\n c\n"
            "\x1b[36m@@ -1 +1 @@\x1b[0m\n");
  std::string shown = AskWith(OneFile("x\n"), "d\n").second;
  EXPECT_EQ(shown.find("\x1b["), std::string::npos);  // no colour asked
}

TEST(PagerTest, SearchAndQuitFromAPipe) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + "\n";
  std::string shown = Typed(" \n/line 77\nq\n", [&](int in, int out) {
    question_internal::AnswerReader reader(in);
    Page(text, reader, out, PagerOptions());
  });
  EXPECT_NE(shown.find("-- lines 1-23 of 100 (23%) --"), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("-- lines 24-46 of 100"), std::string::npos);
  EXPECT_NE(shown.find("-- lines 78-100 of 100 (END): found \"line 77\""),
            std::string::npos)
      << shown;
}

}  // namespace
}  // namespace garuda
