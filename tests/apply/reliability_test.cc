// garuda-applier under what a person's machine does to it: a save between
// the check and the rename, signals and kills at chosen steps of a large
// apply, a full disk, a folder moved away, crafted change lists and chains
// of links. The real binary, stopped where needed by its pause seam.
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/changeset.h"
#include "lib/changeset/test_tree.h"
#include "lib/lockdown/test_child.h"
#include "tests/apply/runner.h"

namespace garuda {
namespace {

using testing::AddedFile;
using testing::ApplyArgs;
using testing::ChangeList;
using testing::Finish;
using testing::MakeDir;
using testing::MakeScene;
using testing::NewTempDir;
using testing::Paused;
using testing::Read;
using testing::Remove;
using testing::Result;
using testing::RunApplier;
using testing::Scene;
using testing::Snapshot;
using testing::StartPaused;
using testing::Symlink;
using testing::Temporaries;
using testing::Write;

std::string Real(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) ? resolved : path;
}

// A snapshot taken while the applier is paused, without its temporaries:
// what the project holds for the person.
std::map<std::string, std::string> WithoutTemporaries(const std::string& root) {
  std::map<std::string, std::string> snapshot = Snapshot(root);
  for (auto it = snapshot.begin(); it != snapshot.end();) {
    if (absl::StrContains(absl::StrCat("/", it->first), "/.garuda-")) {
      it = snapshot.erase(it);
    } else {
      ++it;
    }
  }
  return snapshot;
}

std::vector<std::string> Show(const Scene& scene) {
  return {"show", "--project", scene.project};
}

std::vector<std::string> UndoList(const Scene& scene) {
  return {"undo", "--project", scene.project, "--list"};
}

// `count` files in many/, in the project ("old") and changed in the staged
// copy ("new"): a list large enough to be synced with syncfs.
void ManyFiles(const Scene& scene, int count) {
  for (int i = 0; i < count; ++i) {
    std::string name = absl::StrFormat("many/f%04d.txt", i);
    Write(scene.project + "/" + name, absl::StrCat("old ", i, "\n"));
    Write(scene.staged + "/" + name, absl::StrCat("new ", i, "\n"));
  }
}

ChangeSet Crafted(const Scene& scene) {
  ChangeSet change_set;
  change_set.header.set_project_root(Real(scene.project));
  change_set.header.set_command("crafted by the test");
  return change_set;
}

// `apply --yes` of a crafted list.
Result ApplyCrafted(const Scene& scene, const ChangeSet& change_set) {
  return RunApplier(scene, ApplyArgs(scene, "--yes"),
                    testing::WriteList(change_set));
}

Change Folder(const std::string& path, uint32_t mode) {
  Change change;
  change.entry.set_path(path);
  change.entry.set_kind(CHANGE_KIND_ADDED);
  change.entry.mutable_base()->set_type(FILE_TYPE_ABSENT);
  change.entry.set_new_type(FILE_TYPE_DIRECTORY);
  change.entry.set_new_mode(mode);
  return change;
}

Change Link(const std::string& path, const std::string& target) {
  Change change;
  change.entry.set_path(path);
  change.entry.set_kind(CHANGE_KIND_ADDED);
  change.entry.mutable_base()->set_type(FILE_TYPE_ABSENT);
  change.entry.set_new_type(FILE_TYPE_SYMLINK);
  change.entry.set_link_target(target);
  return change;
}

// --- 14.1: a save between the conflict check and the rename -------------

// The person saves in the window between the check and the first rename
// (the seam holds the applier there): the save survives, the apply ends as
// a conflict with nothing applied, and no undo record claims otherwise.
void SaveInTheWindow(const std::string& how_saved) {
  Scene scene = MakeScene();
  Write(scene.staged + "/a.txt", "from the command\n");
  Write(scene.staged + "/other.txt", "new\n");
  std::string changes = ChangeList(scene);
  Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 1);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  if (how_saved == "in place") {
    Write(scene.project + "/a.txt", "the person's save\n");
  } else if (how_saved == "deleted") {
    Remove(scene.project + "/a.txt");
  } else if (how_saved == "chmod") {
    ASSERT_EQ(::chmod((scene.project + "/a.txt").c_str(), 0600), 0);
  } else {  // as editors do: a new file renamed over the old one
    Write(scene.project + "/.a.txt.swp", "the person's save\n");
    ASSERT_EQ(::rename((scene.project + "/.a.txt.swp").c_str(),
                       (scene.project + "/a.txt").c_str()),
              0);
  }
  auto saved = WithoutTemporaries(scene.project);
  Result result = Finish(paused, 'c');
  EXPECT_EQ(result.code, 4) << result.err;
  EXPECT_NE(result.err.find("a.txt: changed in the project during the apply"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(Snapshot(scene.project), saved);  // other.txt not applied either
  EXPECT_EQ(RunApplier(scene, UndoList(scene)).out,
            "No applies recorded for this project\n");
}

TEST(ApplierRaceTest, SaveInPlaceAfterTheCheckIsKept) {
  SaveInTheWindow("in place");
}

TEST(ApplierRaceTest, SaveByRenameAfterTheCheckIsKept) {
  SaveInTheWindow("by rename");
}

TEST(ApplierRaceTest, DeletionOrModeChangeAfterTheCheckIsKept) {
  SaveInTheWindow("deleted");
  SaveInTheWindow("chmod");
}

TEST(ApplierRaceTest, PathsMadeOrFilledAfterTheCheckAreConflicts) {
  Scene scene = MakeScene();
  Write(scene.staged + "/brand-new.txt", "from the command\n");
  Remove(scene.staged + "/d");
  std::string changes = ChangeList(scene);
  // A file made where the list adds one, and one put into a folder the
  // list removes.
  for (const std::string& made : {"brand-new.txt", "d/three"}) {
    Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 1);
    ASSERT_TRUE(paused.paused) << Read(paused.err);
    Write(scene.project + "/" + made, "the person's\n");
    auto before = WithoutTemporaries(scene.project);
    Result result = Finish(paused, 'c');
    EXPECT_EQ(result.code, 4) << made << ": " << result.err;
    EXPECT_EQ(Snapshot(scene.project), before) << made;
    Remove(scene.project + "/" + made);
  }
  // Control: with nothing done in the window the same list applies.
  Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 1);
  ASSERT_TRUE(paused.paused);
  Result result = Finish(paused, 'c');
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
}

// --- 14.2: signals and kills mid-apply ----------------------------------

TEST(ApplierSignalTest, CaughtSignalsPutEverythingBack) {
  for (int signal : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    Scene scene = MakeScene();
    ManyFiles(scene, 300);
    std::string changes = ChangeList(scene);
    auto before = Snapshot(scene.project);
    Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 150);
    ASSERT_TRUE(paused.paused) << Read(paused.err);
    ASSERT_EQ(::kill(paused.pid, signal), 0);
    Result result = Finish(paused, 'c');
    EXPECT_EQ(result.code, 128 + signal) << result.err;
    EXPECT_NE(result.err.find("interrupted by signal"), std::string::npos)
        << result.err;
    EXPECT_EQ(Snapshot(scene.project), before) << strsignal(signal);
    EXPECT_EQ(RunApplier(scene, UndoList(scene)).out,
              "No applies recorded for this project\n");
    // Control: the same list without a signal is applied whole.
    Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
    EXPECT_EQ(applied.code, 0) << applied.err;
    EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
  }
}

TEST(ApplierSignalTest, KillMidApplyIsReversedByRecover) {
  Scene scene = MakeScene();
  ManyFiles(scene, 2000);  // thousands, as a real refactoring
  std::string changes = ChangeList(scene);
  auto before = Snapshot(scene.project);
  Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 1500);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  ASSERT_EQ(::kill(paused.pid, SIGKILL), 0);
  Result killed = Finish(paused, 0);
  EXPECT_EQ(killed.code, 128 + SIGKILL);
  // Negative control: what a kill leaves is a mix of old and new, with the
  // temporaries beside the targets.
  EXPECT_EQ(Read(scene.project + "/many/f0000.txt"), "new 0\n");
  EXPECT_EQ(Read(scene.project + "/many/f1999.txt"), "old 1999\n");
  EXPECT_FALSE(Temporaries(scene.project).empty());
  // show writes nothing: it says what waits for recovery.
  Result shown = RunApplier(scene, Show(scene), changes);
  EXPECT_NE(shown.err.find("garuda-applier recover"), std::string::npos)
      << shown.err;
  Result recovered = RunApplier(scene, {"recover", "--project", scene.project});
  EXPECT_EQ(recovered.code, 0) << recovered.err;
  EXPECT_NE(recovered.out.find("reversed"), std::string::npos) << recovered.out;
  EXPECT_EQ(Snapshot(scene.project), before);
  // Control: nothing waits now, and show says nothing of it.
  EXPECT_EQ(RunApplier(scene, Show(scene), changes).err.find("recover"),
            std::string::npos);
  EXPECT_EQ(RunApplier(scene, {"recover", "--project", scene.project}).out,
            "Nothing to recover\n");
  EXPECT_EQ(RunApplier(scene, UndoList(scene)).out,
            "No applies recorded for this project\n");
}

TEST(ApplierSignalTest, KillAtChosenStepsThenTheNextApplyRecoversFirst) {
  // A type change, a deletion, a new folder, a mode change and many
  // replaced files, killed at several steps.
  for (int step : {1, 2, 40, 101, 104}) {
    Scene scene = MakeScene();
    ManyFiles(scene, 100);
    Remove(scene.staged + "/d");
    Write(scene.staged + "/d", "now a file\n");
    Remove(scene.staged + "/src/x.c");
    Write(scene.staged + "/new/deep/file.txt", "new\n");
    ASSERT_EQ(::chmod((scene.staged + "/tool.sh").c_str(), 0700), 0);
    std::string changes = ChangeList(scene);
    auto before = Snapshot(scene.project);
    Paused paused =
        StartPaused(scene, ApplyArgs(scene, "--yes"), changes, step);
    ASSERT_TRUE(paused.paused) << step << ": " << Read(paused.err);
    ASSERT_EQ(::kill(paused.pid, SIGKILL), 0);
    Finish(paused, 0);
    EXPECT_NE(Snapshot(scene.project), before) << step;
    // The next apply of the list first reverses the interrupted one, says
    // so, then applies the list whole.
    Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
    EXPECT_EQ(applied.code, 0) << step << ": " << applied.err;
    EXPECT_NE(applied.err.find("reversed"), std::string::npos) << applied.err;
    EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged)) << step;
  }
}

TEST(ApplierSignalTest, KillAfterTheLastStepIsFinished) {
  Scene scene = MakeScene();
  ManyFiles(scene, 50);
  std::string changes = ChangeList(scene);
  // Step 51 of 50: after the commit mark, before the temporaries go.
  Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 51);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  ASSERT_EQ(::kill(paused.pid, SIGKILL), 0);
  Finish(paused, 0);
  EXPECT_FALSE(Temporaries(scene.project).empty());  // control
  Result recovered = RunApplier(scene, {"recover", "--project", scene.project});
  EXPECT_EQ(recovered.code, 0) << recovered.err;
  EXPECT_NE(recovered.out.find("finished"), std::string::npos) << recovered.out;
  EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
  // Finished applies can be undone like any other.
  Result list = RunApplier(scene, UndoList(scene));
  EXPECT_NE(list.out.find("50 paths"), std::string::npos) << list.out;
}

// An undo is an apply of the inverse list: held and journaled the same way.
TEST(ApplierSignalTest, UndoIsHeldAndRecoveredTheSameWay) {
  Scene scene = MakeScene();
  ManyFiles(scene, 300);
  auto before = Snapshot(scene.project);
  Result applied =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  ASSERT_EQ(applied.code, 0) << applied.err;
  auto after = Snapshot(scene.project);
  Result list = RunApplier(scene, UndoList(scene));
  std::string id = list.out.substr(0, list.out.find(' '));
  std::vector<std::string> undo = {"undo", "--project", scene.project, id};
  Paused paused = StartPaused(scene, undo, "", 150);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  ASSERT_EQ(::kill(paused.pid, SIGTERM), 0);
  Result interrupted = Finish(paused, 'c');
  EXPECT_EQ(interrupted.code, 128 + SIGTERM) << interrupted.err;
  EXPECT_EQ(Snapshot(scene.project), after);
  paused = StartPaused(scene, undo, "", 150);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  ASSERT_EQ(::kill(paused.pid, SIGKILL), 0);
  Finish(paused, 0);
  EXPECT_NE(Snapshot(scene.project), after);  // control: half undone
  Result undone = RunApplier(scene, undo);
  EXPECT_EQ(undone.code, 0) << undone.err;
  EXPECT_NE(undone.err.find("reversed"), std::string::npos) << undone.err;
  EXPECT_EQ(Snapshot(scene.project), before);
}

// --- 14.3: no temporary survives a failed apply -------------------------

// The person renames a folder while the apply is in it, and makes a new
// one at its old path: what was done is put back in the renamed folder
// (found by the descriptor the applier holds, not by its old path), and no
// temporary is left in either.
TEST(ApplierCleanupTest, FolderMovedAwayMidApply) {
  Scene scene = MakeScene();
  ManyFiles(scene, 100);
  std::string changes = ChangeList(scene);
  Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 50);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  std::string moved = scene.project + "/moved";
  ASSERT_EQ(::rename((scene.project + "/many").c_str(), moved.c_str()), 0);
  Write(scene.project + "/many/f0000.txt", "someone else's\n");
  Result result = Finish(paused, 'f');
  EXPECT_EQ(result.code, 1) << result.err;
  EXPECT_EQ(result.err.find("unchanged"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("the project is as before"), std::string::npos)
      << result.err;
  EXPECT_EQ(Temporaries(scene.project), std::vector<std::string>());
  for (int i : {0, 48, 49, 50, 99}) {
    EXPECT_EQ(Read(absl::StrFormat("%s/f%04d.txt", moved, i)),
              absl::StrCat("old ", i, "\n"));
  }
  EXPECT_EQ(Read(scene.project + "/many/f0000.txt"), "someone else's\n");
  // Control: the detector sees a temporary where there is one.
  Write(moved + "/.garuda-new-x-1", "left\n");
  EXPECT_EQ(Temporaries(scene.project),
            std::vector<std::string>{"moved/.garuda-new-x-1"});
}

// Moved out of the project, the folder is beyond the applier's Landlock
// domain: it cannot put it back, and it says so instead of "as before".
TEST(ApplierCleanupTest, FolderMovedOutOfTheProjectIsReportedNotHidden) {
  Scene scene = MakeScene();
  ManyFiles(scene, 100);
  std::string changes = ChangeList(scene);
  Paused paused = StartPaused(scene, ApplyArgs(scene, "--yes"), changes, 50);
  ASSERT_TRUE(paused.paused) << Read(paused.err);
  std::string away = NewTempDir("away") + "/many";
  ASSERT_EQ(::rename((scene.project + "/many").c_str(), away.c_str()), 0);
  Result result = Finish(paused, 'f');
  EXPECT_EQ(result.code, 1) << result.err;
  EXPECT_EQ(result.err.find("as before"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("putting the project back failed too"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("left behind"), std::string::npos) << result.err;
  EXPECT_EQ(Temporaries(scene.project), std::vector<std::string>());
}

// A folder the person moves out of the project at any point of an apply
// (each step of the apply in turn, and after the commit before the
// cleanup) keeps no temporary of the applier: the new contents wait in the
// applier's work folder, never beside the files they replace, so nothing
// of the applier's is in a folder that leaves its Landlock domain. Before
// that, temporaries stayed in the moved folder in every such run (about 1
// apply in 60 when the move came unannounced).
TEST(ApplierCleanupTest, FolderMovedOutAtAnyStepKeepsNoTemporary) {
  constexpr int kFiles = 12;
  // Step 1 is before the first rename, kFiles + 1 after the commit.
  for (int step = 1; step <= kFiles + 1; ++step) {
    for (char answer : {'c', 'f'}) {
      SCOPED_TRACE(
          absl::StrCat("step ", step, " answer ", std::string(1, answer)));
      Scene scene = MakeScene();
      ManyFiles(scene, kFiles);
      std::string changes = ChangeList(scene);
      Paused paused =
          StartPaused(scene, ApplyArgs(scene, "--yes"), changes, step);
      ASSERT_TRUE(paused.paused) << Read(paused.err);
      std::string away = NewTempDir("away") + "/many";
      ASSERT_EQ(::rename((scene.project + "/many").c_str(), away.c_str()), 0);
      Result result = Finish(paused, answer);
      EXPECT_EQ(Temporaries(away), std::vector<std::string>()) << result.err;
      EXPECT_EQ(Temporaries(scene.project), std::vector<std::string>())
          << result.err;
      // What the folder holds is each file's old or new content, whole.
      for (int i = 0; i < kFiles; ++i) {
        std::string content =
            Read(absl::StrFormat("%s/f%04d.txt", away.c_str(), i));
        EXPECT_TRUE(content == absl::StrCat("old ", i, "\n") ||
                    content == absl::StrCat("new ", i, "\n"))
            << i << ": " << content;
      }
    }
  }
  // Control: the detector sees a temporary in a moved folder.
  std::string away = NewTempDir("away-control");
  Write(away + "/.garuda-new-x-1", "left\n");
  EXPECT_EQ(Temporaries(away), std::vector<std::string>{".garuda-new-x-1"});
}

TEST(ApplierCleanupTest, FullDiskLeavesNoTemporary) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  Scene scene = MakeScene();
  std::string changes_path;
  // In a mount namespace of its own: a 1 MiB tmpfs as the project.
  absl::StatusOr<std::string> outcome = RunInChild([&]() -> std::string {
    if (::unshare(CLONE_NEWNS) != 0) return "unshare failed";
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return "mount --make-rprivate failed";
    std::string small = NewTempDir("small");
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m") != 0)
      return "mount tmpfs failed";
    Scene inside = scene;
    inside.project = small + "/project";
    testing::CopyTree(scene.project, inside.project);
    Write(inside.staged + "/big.bin", std::string(2 << 20, 'x'));
    Write(inside.staged + "/a.txt", "changed\n");
    std::string changes = ChangeList(inside);
    auto before = Snapshot(inside.project);
    Result full = RunApplier(inside, ApplyArgs(inside, "--yes"), changes);
    std::string report = absl::StrCat("code ", full.code);
    if (full.err.find("No space left") == std::string::npos)
      absl::StrAppend(&report, " no-ENOSPC-message:", full.err);
    if (full.err.find("unchanged") != std::string::npos)
      absl::StrAppend(&report, " says-unchanged");
    if (Snapshot(inside.project) != before)
      absl::StrAppend(&report, " project-changed");
    if (!Temporaries(inside.project).empty())
      absl::StrAppend(&report, " temporaries-left");
    // Control: with room enough the same list applies.
    ::umount2(small.c_str(), MNT_DETACH);
    if (::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=16m") != 0)
      return "mount tmpfs failed";
    testing::CopyTree(scene.project, inside.project);
    Result roomy = RunApplier(inside, ApplyArgs(inside, "--yes"), changes);
    absl::StrAppend(&report, "; with room: code ", roomy.code);
    ::umount2(small.c_str(), MNT_DETACH);
    return report;
  });
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(*outcome, "code 1; with room: code 0");
}

// --- 14.4: .git at any depth --------------------------------------------

TEST(ApplierRefusalTest, NestedGitFoldersAreRefusedInShowAndApply) {
  Scene scene = MakeScene();
  auto before = Snapshot(scene.project);
  for (const std::string& path :
       {"vendor/lib/.git/hooks/post-checkout", "sub/.git/config", ".git/config",
        "a/.git", "sub/.GIT/config"}) {
    ChangeSet change_set = Crafted(scene);
    change_set.changes.push_back(AddedFile(path, "[core]\nfsmonitor=x\n"));
    std::string list = testing::WriteList(change_set);
    Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), list);
    EXPECT_EQ(applied.code, 5) << path << ": " << applied.err;
    EXPECT_NE(applied.err.find(".git"), std::string::npos) << applied.err;
    Result shown = RunApplier(scene, Show(scene), list);
    EXPECT_EQ(shown.code, 5) << path << ": " << shown.out << shown.err;
    EXPECT_NE(shown.out.find("Refused"), std::string::npos) << shown.out;
    EXPECT_EQ(Snapshot(scene.project), before) << path;
  }
  // Control: the same list under a folder merely named like git applies.
  ChangeSet change_set = Crafted(scene);
  change_set.changes.push_back(
      AddedFile("vendor/lib/git/hooks/post-checkout", "x\n"));
  EXPECT_EQ(ApplyCrafted(scene, change_set).code, 0);
}

// What a command writes in a nested .git stays in staging: the list built
// from the copy leaves it out (control: a folder merely named git is in).
TEST(ApplierRefusalTest, NestedGitWrittenByACommandStaysInStaging) {
  Scene scene = MakeScene();
  Write(scene.staged + "/vendor/lib/.git/config", "[core]\nfsmonitor=x\n");
  Write(scene.staged + "/vendor/lib/git/config", "plain\n");
  std::string changes = ChangeList(scene);
  Result shown = RunApplier(scene, Show(scene), changes);
  EXPECT_EQ(shown.code, 0) << shown.out << shown.err;
  EXPECT_EQ(shown.out.find(".git"), std::string::npos) << shown.out;
  Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  EXPECT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(Read(scene.project + "/vendor/lib/git/config"), "plain\n");
  EXPECT_NE(::access((scene.project + "/vendor/lib/.git").c_str(), F_OK), 0);
}

// --- 14.5: say and do the same ------------------------------------------

TEST(ApplierRefusalTest, SetgidFolderIsRefused) {
  Scene scene = MakeScene();
  ChangeSet change_set = Crafted(scene);
  change_set.changes.push_back(Folder("shared", 02775));
  auto before = Snapshot(scene.project);
  Result result = ApplyCrafted(scene, change_set);
  EXPECT_EQ(result.code, 5) << result.err;
  EXPECT_NE(result.err.find("setgid"), std::string::npos) << result.err;
  EXPECT_EQ(Snapshot(scene.project), before);
  // Control: the same folder without the bit is applied.
  change_set.changes[0] = Folder("shared", 0775);
  EXPECT_EQ(ApplyCrafted(scene, change_set).code, 0);
  struct stat st;
  ASSERT_EQ(::stat((scene.project + "/shared").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
}

TEST(ApplierRefusalTest, HashMismatchExitsWithTheRefusedCode) {
  Scene scene = MakeScene();
  ChangeSet change_set = Crafted(scene);
  change_set.changes.push_back(AddedFile("new.txt", "hello\n"));
  change_set.changes[0].entry.set_new_sha256(Sha256Bytes("something else"));
  std::string list = testing::WriteList(change_set);
  auto before = Snapshot(scene.project);
  Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), list);
  EXPECT_EQ(applied.code, 5) << applied.err;
  EXPECT_NE(applied.err.find("SHA-256"), std::string::npos) << applied.err;
  EXPECT_EQ(RunApplier(scene, Show(scene), list).code, 5);
  EXPECT_EQ(RunApplier(scene, ApplyArgs(scene, "--dry-run"), list).code, 5);
  EXPECT_EQ(Snapshot(scene.project), before);
  // Control: with its real hash the list applies.
  change_set.changes[0].entry.set_new_sha256(Sha256Bytes("hello\n"));
  EXPECT_EQ(ApplyCrafted(scene, change_set).code, 0);
}

TEST(ApplierRefusalTest, ListWithNoProjectIsNotTakenForThisOne) {
  Scene scene = MakeScene();
  ChangeSet change_set = Crafted(scene);
  change_set.changes.push_back(AddedFile("new.txt", "hello\n"));
  change_set.header.set_project_root("");
  auto before = Snapshot(scene.project);
  Result result = ApplyCrafted(scene, change_set);
  EXPECT_EQ(result.code, 1) << result.err;
  EXPECT_NE(result.err.find("names no project"), std::string::npos)
      << result.err;
  EXPECT_EQ(Snapshot(scene.project), before);
  // Control: another project's list is refused the same way; this one's
  // is applied.
  change_set.header.set_project_root(Real(scene.staged));
  EXPECT_EQ(ApplyCrafted(scene, change_set).code, 1);
  change_set.header.set_project_root(Real(scene.project));
  EXPECT_EQ(ApplyCrafted(scene, change_set).code, 0);
}

// --- 13.2: links judged where they lead once applied ---------------------

TEST(ApplierLinkTest, ChainsThatLeaveTheRootAreRefused) {
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> in_project, in_list;
  };
  std::vector<Case> cases = {
      {"chain in the list", {}, {{"L0", "."}, {"L1", "L0/.."}}},
      {"chain through the project's link", {{"L0", "."}}, {{"L1", "L0/.."}}},
      {"deeper chain", {}, {{"a/b/c", "../.."}, {"a/up", "b/c/.."}}},
      {"through a folder the list makes",
       {},
       {{"new/dir/up", "../.."}, {"new/out", "dir/up/../x"}}},
      {"link to a link to an absolute path",
       {{"abs", "/etc"}},
       {{"via", "abs/passwd"}}},
      {"a loop", {}, {{"loop1", "loop2"}, {"loop2", "loop1"}}},
  };
  for (const Case& c : cases) {
    Scene scene = MakeScene();
    for (const auto& [path, target] : c.in_project)
      Symlink(target, scene.project + "/" + path);
    ChangeSet change_set = Crafted(scene);
    for (const auto& [path, target] : c.in_list)
      change_set.changes.push_back(Link(path, target));
    std::string list = testing::WriteList(change_set);
    auto before = Snapshot(scene.project);
    Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), list);
    EXPECT_EQ(applied.code, 5) << c.name << ": " << applied.err;
    EXPECT_NE(applied.err.find("leads out of the project"), std::string::npos)
        << c.name << ": " << applied.err;
    EXPECT_EQ(Snapshot(scene.project), before) << c.name;
    Result shown = RunApplier(scene, Show(scene), list);
    EXPECT_EQ(shown.code, 5) << c.name;
    EXPECT_NE(shown.out.find("leads out of the project"), std::string::npos)
        << c.name << ": " << shown.out;
  }
}

TEST(ApplierLinkTest, ListThatRedirectsAnExistingLinkOutIsRefused) {
  Scene scene = MakeScene();
  MakeDir(scene.project + "/x/a");
  // Inside today: x/a/../.. is the root.
  Symlink("x/a/../..", scene.project + "/E");
  ChangeSet change_set = Crafted(scene);
  Change replace = Link("x/a", ".");
  replace.entry.set_kind(CHANGE_KIND_TYPE_CHANGED);
  replace.entry.mutable_base()->set_type(FILE_TYPE_DIRECTORY);
  replace.entry.mutable_base()->set_mode(0755);
  change_set.changes.push_back(replace);
  Result applied = ApplyCrafted(scene, change_set);
  EXPECT_EQ(applied.code, 5) << applied.err;
  EXPECT_NE(applied.err.find("the project's link E"), std::string::npos)
      << applied.err;
}

TEST(ApplierLinkTest, LinksThatStayInsideAreAppliedAndShownResolved) {
  Scene scene = MakeScene();
  Symlink(".", scene.project + "/L0");
  ChangeSet change_set = Crafted(scene);
  change_set.changes.push_back(Link("L1", "L0/src"));
  change_set.changes.push_back(Link("src/L2", "../L1/x.c"));
  std::string list = testing::WriteList(change_set);
  Result shown = RunApplier(scene, Show(scene), list);
  EXPECT_EQ(shown.code, 0) << shown.out << shown.err;
  EXPECT_NE(shown.out.find("L1 -> L0/src: leads to src"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("src/L2 -> ../L1/x.c: leads to src/x.c"),
            std::string::npos)
      << shown.out;
  Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), list);
  EXPECT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(Read(scene.project + "/src/L2"), "int x;\n");
}

}  // namespace
}  // namespace garuda
