#include "lib/changeset/builder.h"

#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/sha256.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

using testing::CopyTree;
using testing::MakeDir;
using testing::NewTempDir;
using testing::Remove;
using testing::Symlink;
using testing::Write;

using testing::FindEntry;
using Pair = testing::ProjectPair;

Pair MakePair() { return testing::MakeProjectPair("pair"); }

ChangeSet Build(const Pair& pair, BuildOptions options = {}) {
  options.project = pair.project;
  absl::StatusOr<ChangeSet> change_set = BuildFromCopy(pair.staged, options);
  EXPECT_TRUE(change_set.ok()) << change_set.status();
  return change_set.ok() ? *std::move(change_set) : ChangeSet();
}

TEST(BuildFromCopyTest, NoChangeIsAnEmptyList) {
  Pair pair = MakePair();
  ChangeSet change_set = Build(pair);
  EXPECT_TRUE(change_set.NoChanges());
  EXPECT_FALSE(change_set.summary.incomplete());
}

TEST(BuildFromCopyTest, AddedModifiedDeletedAndModeChanged) {
  Pair pair = MakePair();
  Write(pair.staged + "/new.txt", "new\n");
  Write(pair.staged + "/a.txt", "changed\n");
  Remove(pair.staged + "/src/y.c");
  ::chmod((pair.staged + "/tool.sh").c_str(), 0700);
  ChangeSet change_set = Build(pair);
  ASSERT_EQ(change_set.changes.size(), 4u);
  const ChangeEntry* added = FindEntry(change_set, "new.txt");
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->kind(), CHANGE_KIND_ADDED);
  EXPECT_EQ(added->base().type(), FILE_TYPE_ABSENT);
  EXPECT_EQ(added->size(), 4u);
  const ChangeEntry* modified = FindEntry(change_set, "a.txt");
  ASSERT_NE(modified, nullptr);
  EXPECT_EQ(modified->kind(), CHANGE_KIND_MODIFIED);
  EXPECT_EQ(modified->base().type(), FILE_TYPE_REGULAR);
  EXPECT_EQ(modified->base().sha256(), Sha256Bytes("a\n"));
  const ChangeEntry* deleted = FindEntry(change_set, "src/y.c");
  ASSERT_NE(deleted, nullptr);
  EXPECT_EQ(deleted->kind(), CHANGE_KIND_DELETED);
  EXPECT_EQ(deleted->new_type(), FILE_TYPE_ABSENT);
  const ChangeEntry* mode = FindEntry(change_set, "tool.sh");
  ASSERT_NE(mode, nullptr);
  EXPECT_EQ(mode->kind(), CHANGE_KIND_MODE_CHANGED);
  EXPECT_EQ(mode->new_mode(), 0700u);
}

TEST(BuildFromCopyTest, FileBecomesFolderAndFolderBecomesFile) {
  Pair pair = MakePair();
  Remove(pair.staged + "/a.txt");
  Write(pair.staged + "/a.txt/inside", "i\n");
  Remove(pair.staged + "/d");
  Write(pair.staged + "/d", "now a file\n");
  ChangeSet change_set = Build(pair);
  const ChangeEntry* a = FindEntry(change_set, "a.txt");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind(), CHANGE_KIND_TYPE_CHANGED);
  EXPECT_EQ(a->new_type(), FILE_TYPE_DIRECTORY);
  ASSERT_NE(FindEntry(change_set, "a.txt/inside"), nullptr);
  const ChangeEntry* one = FindEntry(change_set, "d/one");
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->kind(), CHANGE_KIND_DELETED);
  const ChangeEntry* d = FindEntry(change_set, "d");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind(), CHANGE_KIND_TYPE_CHANGED);
  EXPECT_EQ(d->base().type(), FILE_TYPE_DIRECTORY);
  EXPECT_EQ(d->new_type(), FILE_TYPE_REGULAR);
}

TEST(BuildFromCopyTest, SymlinksAreListedWithTheirTargets) {
  Pair pair = MakePair();
  Symlink("src/x.c", pair.staged + "/link");
  ChangeSet change_set = Build(pair);
  const ChangeEntry* link = FindEntry(change_set, "link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->new_type(), FILE_TYPE_SYMLINK);
  EXPECT_EQ(link->link_target(), "src/x.c");
}

TEST(BuildFromCopyTest, SpecialFilesAndSetuidAreRefused) {
  Pair pair = MakePair();
  ASSERT_EQ(::mkfifo((pair.staged + "/fifo").c_str(), 0644), 0);
  Write(pair.staged + "/suid", "x", 0755);
  ASSERT_EQ(::chmod((pair.staged + "/suid").c_str(), 04755), 0);
  ChangeSet change_set = Build(pair);
  ASSERT_EQ(change_set.summary.refused_size(), 2);
  EXPECT_EQ(change_set.summary.refused(0).path(), "fifo");
  EXPECT_EQ(change_set.summary.refused(1).path(), "suid");
  EXPECT_EQ(FindEntry(change_set, "suid"), nullptr);
}

TEST(BuildFromCopyTest, OddNamesSurvive) {
  Pair pair = MakePair();
  std::string odd = "with space\nnewline\xff\xfe";
  Write(pair.staged + "/" + odd, "odd\n");
  ChangeSet change_set = Build(pair);
  ASSERT_EQ(change_set.changes.size(), 1u);
  EXPECT_EQ(change_set.changes[0].entry.path(), odd);
}

TEST(BuildFromCopyTest, FileLimitMakesTheListIncomplete) {
  Pair pair = MakePair();
  for (int i = 0; i < 20; ++i)
    Write(absl::StrCat(pair.staged, "/many/", i), "x");
  BuildOptions options;
  options.file_limit = 10;
  ChangeSet change_set = Build(pair, options);
  EXPECT_TRUE(change_set.summary.incomplete());
  EXPECT_NE(change_set.summary.incomplete_reason().find("limit of 10 files"),
            std::string::npos);
}

TEST(BuildFromCopyTest, UnreadableFileMakesTheListIncomplete) {
  Pair pair = MakePair();
  Write(pair.staged + "/secret.txt", "x");
  BuildOptions options;
  options.before_read = [](absl::string_view path) {
    return path == "secret.txt"
               ? absl::PermissionDeniedError("Permission denied")
               : absl::OkStatus();
  };
  ChangeSet change_set = Build(pair, options);
  EXPECT_TRUE(change_set.summary.incomplete());
  EXPECT_NE(change_set.summary.incomplete_reason().find("secret.txt"),
            std::string::npos);
}

int Git(const std::string& dir, const std::string& args) {
  return std::system(
      absl::StrCat("git -C '", dir, "' ", args, " >/dev/null 2>&1").c_str());
}

TEST(BuildFromCopyTest, GitIgnoredFilesAreCountedAndSensitiveOnesNamed) {
  std::string base = NewTempDir("git");
  Pair pair{base, base + "/project", base + "/staged"};
  Write(pair.project + "/.gitignore", "build/\n*.log\n.env\n");
  Write(pair.project + "/src/main.c", "int main;\n");
  Write(pair.project + "/tracked.log", "tracked despite *.log\n");
  ASSERT_EQ(Git(pair.project, "init -q"), 0);
  ASSERT_EQ(Git(pair.project, "add -f .gitignore src tracked.log"), 0);
  CopyTree(pair.project, pair.staged);
  for (int i = 0; i < 3; ++i)
    Write(absl::StrCat(pair.staged, "/build/o", i), "o");
  Write(pair.staged + "/run.log", "log");
  Write(pair.staged + "/.env", "TOKEN=1");
  Write(pair.staged + "/tracked.log", "changed\n");
  Write(pair.staged + "/src/main.c", "int main2;\n");
  ChangeSet change_set = Build(pair);
  ASSERT_EQ(change_set.changes.size(), 2u);
  EXPECT_NE(FindEntry(change_set, "tracked.log"), nullptr);
  EXPECT_NE(FindEntry(change_set, "src/main.c"), nullptr);
  std::map<std::string, uint64_t> ignored;
  for (const IgnoredCount& count : change_set.summary.ignored()) {
    ignored[count.folder()] = count.files();
  }
  EXPECT_EQ(ignored["build/"], 3u);
  EXPECT_EQ(ignored[""], 2u);  // run.log and .env
  ASSERT_EQ(change_set.summary.sensitive_ignored_size(), 1);
  EXPECT_EQ(change_set.summary.sensitive_ignored(0), ".env");
  // Negative control: without git every file counts.
  Remove(pair.project + "/.git");
  ChangeSet without_git = Build(pair);
  EXPECT_EQ(without_git.changes.size(),
            8u);  // + build/, 3 files, run.log, .env
}

TEST(BuildFromCopyTest, AGitignoreWrittenByTheCommandHidesNothing) {
  std::string base = NewTempDir("gitignore");
  Pair pair{base, base + "/project", base + "/staged"};
  Write(pair.project + "/a", "a");
  ASSERT_EQ(Git(pair.project, "init -q"), 0);
  CopyTree(pair.project, pair.staged);
  Write(pair.staged + "/.gitignore", "evil\n");
  Write(pair.staged + "/evil", "payload");
  ChangeSet change_set = Build(pair);
  EXPECT_NE(FindEntry(change_set, "evil"), nullptr);
}

TEST(BuildFromCopyTest, IgnoredFilesDoNotCountTowardTheFileLimit) {
  std::string base = NewTempDir("limit-ignored");
  Pair pair{base, base + "/project", base + "/staged"};
  Write(pair.project + "/.gitignore", "node_modules/\n");
  Write(pair.project + "/src/main.c", "int main;\n");
  ASSERT_EQ(Git(pair.project, "init -q"), 0);
  ASSERT_EQ(Git(pair.project, "add .gitignore src"), 0);
  for (int i = 0; i < 30; ++i)
    Write(absl::StrCat(pair.project, "/node_modules/m", i), "m");
  CopyTree(pair.project, pair.staged);
  for (int i = 0; i < 30; ++i)
    Write(absl::StrCat(pair.staged, "/node_modules/n", i), "n");
  Write(pair.staged + "/src/main.c", "int main2;\n");
  BuildOptions options;
  options.file_limit = 10;  // far fewer than the 60 ignored files
  ChangeSet change_set = Build(pair, options);
  EXPECT_FALSE(change_set.summary.incomplete())
      << change_set.summary.incomplete_reason();
  EXPECT_NE(FindEntry(change_set, "src/main.c"), nullptr);
  ASSERT_EQ(change_set.summary.ignored_size(), 1);
  EXPECT_EQ(change_set.summary.ignored(0).folder(), "node_modules/");
  EXPECT_EQ(change_set.summary.ignored(0).files(), 30u);
  // Negative control: the same files, not ignored, pass the limit.
  Write(pair.project + "/.gitignore", "");
  ChangeSet counted = Build(pair, options);
  EXPECT_TRUE(counted.summary.incomplete());
}

TEST(BuildFromCopyTest, AFileTheSnapshotKnowsUnchangedIsNotRead) {
  Pair pair = testing::MakeProjectPair("unchanged");
  Write(pair.staged + "/a.txt", "changed by the command\n");
  Write(pair.staged + "/src/x.c", "changed too\n");
  BuildOptions options;
  options.unchanged = [](const std::string& relative, const struct stat&) {
    return relative == "src/x.c";
  };
  ChangeSet change_set = Build(pair, options);
  EXPECT_NE(FindEntry(change_set, "a.txt"), nullptr);
  EXPECT_EQ(FindEntry(change_set, "src/x.c"), nullptr);
  // Negative control: without the predicate both are listed.
  ChangeSet all = Build(pair);
  EXPECT_NE(FindEntry(all, "src/x.c"), nullptr);
}

}  // namespace
}  // namespace garuda
