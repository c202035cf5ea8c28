#include "lib/apply/apply.h"

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

using testing::CopyTree;
using testing::NewTempDir;
using testing::Read;
using testing::Remove;
using testing::Snapshot;
using testing::Symlink;
using testing::Write;

struct Fixture : testing::ProjectPair {
  std::string undo;
};

Fixture Make() {
  Fixture f;
  static_cast<testing::ProjectPair&>(f) = testing::MakeProjectPair("apply");
  f.undo = f.base + "/undo";
  return f;
}

ChangeSet Build(const Fixture& f) {
  BuildOptions options;
  options.project = f.project;
  absl::StatusOr<ChangeSet> change_set = BuildFromCopy(f.staged, options);
  EXPECT_TRUE(change_set.ok()) << change_set.status();
  EXPECT_TRUE(LoadContents(&*change_set).ok());
  return *std::move(change_set);
}

ApplyOptions Options(const Fixture& f) {
  ApplyOptions options;
  options.project = f.project;
  options.undo_root = f.undo;
  return options;
}

// Round trip through the stream, as between two programs.
ChangeSet ThroughStream(const ChangeSet& change_set) {
  int fds[2];
  std::string path = NewTempDir("stream") + "/cs";
  {
    auto fd = OpenFile(path, O_WRONLY | O_CREAT, 0600);
    EXPECT_TRUE(WriteChangeSet(change_set, fd->get(), "test").ok());
  }
  (void)fds;
  auto fd = OpenFile(path, O_RDONLY);
  absl::StatusOr<ChangeSet> read = ReadChangeSet(fd->get(), "test");
  EXPECT_TRUE(read.ok()) << read.status();
  return *std::move(read);
}

TEST(ApplyTest, AppliesAndUndoRestores) {
  Fixture f = Make();
  auto before = Snapshot(f.project);
  Write(f.staged + "/a.txt", "changed\n");
  Write(f.staged + "/new/deep/file", "new\n");
  Remove(f.staged + "/d");
  Write(f.staged + "/d", "d is a file now\n");
  Remove(f.staged + "/src/x.c");
  Write(f.staged + "/src/x.c/inside", "x is a folder now\n");
  ChangeSet change_set = ThroughStream(Build(f));
  auto applied = ApplyChangeSet(change_set, Options(f));
  ASSERT_TRUE(applied.ok()) << applied.status();
  ASSERT_EQ(applied->outcome, ApplyOutcome::kApplied)
      << ::testing::PrintToString(applied->problems);
  EXPECT_EQ(Snapshot(f.project), Snapshot(f.staged));
  auto records = ListUndoRecords(f.undo, f.project);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  auto undone = UndoApply(applied->undo_id, Options(f));
  ASSERT_TRUE(undone.ok()) << undone.status();
  ASSERT_EQ(undone->outcome, ApplyOutcome::kApplied)
      << ::testing::PrintToString(undone->problems);
  EXPECT_EQ(Snapshot(f.project), before);
}

// Records made before the undo folder took the audit's project key (the
// folder name as it was: here with a space, which ProjectKey replaces) are
// still found, and undone.
TEST(ApplyTest, RecordsUnderTheOldUndoKeyAreStillFound) {
  Fixture f = Make();
  const std::string odd = f.base + "/my project";
  ASSERT_EQ(::rename(f.project.c_str(), odd.c_str()), 0);
  f.project = odd;
  auto before = Snapshot(f.project);
  Write(f.staged + "/a.txt", "changed\n");
  auto applied = ApplyChangeSet(Build(f), Options(f));
  ASSERT_TRUE(applied.ok()) << applied.status();
  ASSERT_EQ(applied->outcome, ApplyOutcome::kApplied);
  absl::StatusOr<std::string> real = RealProjectRoot(f.project);
  ASSERT_TRUE(real.ok()) << real.status();
  const std::string now = JoinPath(f.undo, ProjectKey(*real));
  const std::string old =
      JoinPath(f.undo, absl::StrCat(Basename(*real), "-", ProjectHash(*real)));
  ASSERT_NE(now, old);
  // As an applier from before the key left the store.
  ASSERT_EQ(::rename(now.c_str(), old.c_str()), 0);
  // Negative control: under the new key there is nothing.
  ASSERT_NE(::access(now.c_str(), F_OK), 0);
  auto records = ListUndoRecords(f.undo, f.project);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  auto undone = UndoApply(applied->undo_id, Options(f));
  ASSERT_TRUE(undone.ok()) << undone.status();
  ASSERT_EQ(undone->outcome, ApplyOutcome::kApplied)
      << ::testing::PrintToString(undone->problems);
  EXPECT_EQ(Snapshot(f.project), before);
  EXPECT_NE(::access(old.c_str(), F_OK), 0);  // moved, not copied
}

TEST(ApplyTest, ConflictWritesNothing) {
  Fixture f = Make();
  Write(f.staged + "/a.txt", "from the command\n");
  Write(f.staged + "/b.txt", "new\n");
  ChangeSet change_set = Build(f);
  Write(f.project + "/a.txt", "the person's edit\n");
  auto before = Snapshot(f.project);
  auto result = ApplyChangeSet(change_set, Options(f));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, ApplyOutcome::kConflict);
  ASSERT_EQ(result->problems.size(), 1u);
  EXPECT_NE(result->problems[0].find("a.txt"), std::string::npos);
  EXPECT_EQ(Snapshot(f.project), before);
  EXPECT_TRUE(ListUndoRecords(f.undo, f.project)->empty());
}

TEST(ApplyTest, UndoIsConflictChecked) {
  Fixture f = Make();
  Write(f.staged + "/a.txt", "v2\n");
  auto applied = ApplyChangeSet(Build(f), Options(f));
  ASSERT_TRUE(applied.ok());
  Write(f.project + "/a.txt", "edited after the apply\n");
  auto undone = UndoApply(applied->undo_id, Options(f));
  ASSERT_TRUE(undone.ok());
  EXPECT_EQ(undone->outcome, ApplyOutcome::kConflict);
  EXPECT_EQ(Read(f.project + "/a.txt"), "edited after the apply\n");
}

TEST(ApplyTest, FailurePartWayRollsBack) {
  Fixture f = Make();
  Write(f.staged + "/a.txt", "changed\n");
  Write(f.staged + "/z/new", "new\n");
  Remove(f.staged + "/d");
  auto before = Snapshot(f.project);
  ChangeSet change_set = Build(f);
  for (int fail_at = 1; fail_at <= 6; ++fail_at) {
    ApplyOptions options = Options(f);
    int steps = 0;
    options.after_step = [&](int step) {
      steps = step;
      return step == fail_at ? absl::InternalError("injected")
                             : absl::OkStatus();
    };
    auto result = ApplyChangeSet(change_set, options);
    if (steps < fail_at) {  // fewer steps than that: it applied
      ASSERT_TRUE(result.ok()) << result.status();
      break;
    }
    EXPECT_FALSE(result.ok()) << fail_at;
    EXPECT_EQ(Snapshot(f.project), before) << "failure at step " << fail_at;
  }
  // Negative control: without the failure the project does change.
  auto result = ApplyChangeSet(change_set, Options(f));
  ASSERT_TRUE(result.ok());
  EXPECT_NE(Snapshot(f.project), before);
}

TEST(ApplyTest, RefusesEscapes) {
  Fixture f = Make();
  std::string outside = NewTempDir("outside");
  auto file = [](const std::string& path) {
    return testing::AddedFile(path, "owned\n");
  };
  for (const std::string& path :
       {std::string("../escape"), outside + "/abs", std::string("a/../../x"),
        std::string(".git/hooks/pre-commit")}) {
    ChangeSet change_set;
    change_set.changes.push_back(file(path));
    auto result = ApplyChangeSet(change_set, Options(f));
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->outcome, ApplyOutcome::kRefused) << path;
  }
  // A link out of the root.
  ChangeSet link_set;
  Change link;
  link.entry.set_path("link");
  link.entry.set_kind(CHANGE_KIND_ADDED);
  link.entry.mutable_base()->set_type(FILE_TYPE_ABSENT);
  link.entry.set_new_type(FILE_TYPE_SYMLINK);
  link.entry.set_link_target("../../etc");
  link_set.changes.push_back(link);
  auto refused = ApplyChangeSet(link_set, Options(f));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->outcome, ApplyOutcome::kRefused);
  // A write through a symlinked folder of the project.
  Symlink(outside, f.project + "/via");
  ChangeSet through;
  through.changes.push_back(file("via/planted"));
  auto result = ApplyChangeSet(through, Options(f));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome, ApplyOutcome::kRefused);
  EXPECT_EQ(::access((outside + "/planted").c_str(), F_OK), -1);
  // Negative control: a plain open that follows links writes outside.
  Write(f.project + "/via/planted", "owned\n");
  EXPECT_EQ(Read(outside + "/planted"), "owned\n");
}

TEST(ApplyTest, IncompleteListIsRefused) {
  Fixture f = Make();
  Write(f.staged + "/a.txt", "changed\n");
  ChangeSet change_set = Build(f);
  change_set.summary.set_incomplete(true);
  change_set.summary.set_incomplete_reason("the walk passed the limit");
  auto result = ApplyChangeSet(change_set, Options(f));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome, ApplyOutcome::kRefused);
  EXPECT_EQ(Read(f.project + "/a.txt"), "a\n");
}

TEST(ApplyTest, DryRunWritesNothing) {
  Fixture f = Make();
  Write(f.staged + "/a.txt", "changed\n");
  ApplyOptions options = Options(f);
  options.dry_run = true;
  auto result = ApplyChangeSet(Build(f), options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome, ApplyOutcome::kApplied);
  EXPECT_EQ(Read(f.project + "/a.txt"), "a\n");
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

TEST(ApplyTest, ContentThatDoesNotMatchItsHashIsRefused) {
  Fixture f = Make();
  Write(f.staged + "/a.txt", "changed\n");
  BuildOptions options;
  options.project = f.project;
  absl::StatusOr<ChangeSet> change_set = BuildFromCopy(f.staged, options);
  ASSERT_TRUE(change_set.ok());
  ASSERT_EQ(change_set->changes.size(), 1u);
  // The walk keeps small contents in memory, as it hashed them; a content
  // that is not the one hashed (tampered with, or never loaded) is refused.
  change_set->changes[0].content = "tampered\n";
  auto result = ApplyChangeSet(*change_set, Options(f));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome, ApplyOutcome::kRefused);
  EXPECT_EQ(Read(f.project + "/a.txt"), "a\n");
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

TEST(ApplyTest, SymlinkBecomesAFolder) {
  Fixture f = Make();
  Symlink("src", f.project + "/via");
  Symlink("src", f.staged + "/via");
  Remove(f.staged + "/via");
  Write(f.staged + "/via/file", "now a real folder\n");
  auto result = ApplyChangeSet(Build(f), Options(f));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, ApplyOutcome::kApplied)
      << ::testing::PrintToString(result->problems);
  EXPECT_EQ(Snapshot(f.project), Snapshot(f.staged));
  EXPECT_EQ(::access((f.project + "/src/file").c_str(), F_OK), -1);
}

// A save in the window between the conflict check and the rename (the
// before_step seam writes it there).
TEST(ApplyTest, SaveAfterTheCheckIsAConflictAndKept) {
  for (bool verify : {true, false}) {
    Fixture f = Make();
    Write(f.staged + "/a.txt", "from the command\n");
    ChangeSet change_set = Build(f);
    ApplyOptions options = Options(f);
    options.verify_replaced = verify;
    options.before_step = [&](int step) {
      if (step == 1) Write(f.project + "/a.txt", "the person's save\n");
      return absl::OkStatus();
    };
    absl::StatusOr<ApplyResult> result = ApplyChangeSet(change_set, options);
    ASSERT_TRUE(result.ok()) << result.status();
    if (verify) {
      EXPECT_EQ(result->outcome, ApplyOutcome::kConflict);
      EXPECT_EQ(Read(f.project + "/a.txt"), "the person's save\n");
      EXPECT_TRUE(ListUndoRecords(f.undo, f.project)->empty());
    } else {
      // Negative control: without the confirmation the save is lost, and
      // the undo record holds the older content.
      EXPECT_EQ(result->outcome, ApplyOutcome::kApplied);
      EXPECT_EQ(Read(f.project + "/a.txt"), "from the command\n");
      ApplyOptions undo = Options(f);
      ASSERT_TRUE(UndoApply(result->undo_id, undo).ok());
      EXPECT_EQ(Read(f.project + "/a.txt"), "a\n");
    }
  }
}

// The link resolver, in-process: chains judged against the tree after the
// apply (control: the same links, each harmless alone, are applied).
TEST(ApplyTest, LinkChainsJudgedOnTheTreeAfterTheApply) {
  Fixture f = Make();
  Symlink(".", f.staged + "/L0");
  ChangeSet alone = Build(f);
  absl::StatusOr<ApplyResult> applied = ApplyChangeSet(alone, Options(f));
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->outcome, ApplyOutcome::kApplied);
  Symlink("L0/..", f.staged + "/L1");
  ChangeSet chained = Build(f);
  applied = ApplyChangeSet(chained, Options(f));
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->outcome, ApplyOutcome::kRefused);
  EXPECT_EQ(::access((f.project + "/L1").c_str(), F_OK), -1);
}

}  // namespace
}  // namespace garuda
