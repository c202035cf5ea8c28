#include "lib/staging/copy_sync.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "lib/staging/copy_observe.h"
#include "lib/staging/tree_copy.h"

namespace garuda {
namespace {

using testing::NewTempDir;
using testing::Read;
using testing::Write;

int Git(const std::string& dir, const std::string& args) {
  return std::system(
      absl::StrCat("git -C '", dir, "' ", args, " >/dev/null 2>&1").c_str());
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

int64_t CtimeNs(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return TimespecNanoseconds(st.st_ctim);
}

// The newest ctime of anything beneath `root` (git's files included).
int64_t NewestCtimeNs(const std::string& root) {
  static int64_t newest;
  newest = 0;
  ::nftw(
      root.c_str(),
      [](const char*, const struct stat* st, int, struct FTW*) {
        newest = std::max(newest, TimespecNanoseconds(st->st_ctim));
        return 0;
      },
      16, FTW_PHYS);
  return newest;
}

// A git project with an ignored build/ folder, its copy and first snapshot.
struct Fixture {
  std::string project, copy, snapshot_file;
  std::unique_ptr<IgnoreRules> rules;
  CopySnapshot snapshot;

  explicit Fixture(const std::string& label) {
    std::string base = NewTempDir(label);
    project = base + "/project";
    copy = base + "/copy";
    snapshot_file = base + "/snapshot";
    Write(project + "/.gitignore", "build/\n");
    Write(project + "/src/a.c", "a\n");
    Write(project + "/src/b.c", "b\n");
    Write(project + "/README", "readme\n");
    EXPECT_EQ(Git(project, "init -q"), 0);
    EXPECT_EQ(Git(project, "add -A"), 0);
    SyncOptions fresh;
    fresh.fresh_copy = true;
    // The project's files must be older than the copy for the fresh rule.
    WaitForClockPast(NewestCtimeNs(project));
    ::clock_gettime(CLOCK_REALTIME_COARSE, &fresh.copy_started);
    CopyStats stats;
    EXPECT_TRUE(CopyTree(project, copy, &stats).ok());
    rules = *IgnoreRules::ForProject(project);
    Sync(fresh);
  }

  // The walk of the copy after a command; its result is the next refresh's
  // snapshot, with the copy's side known.
  std::unordered_set<std::string> Observe() {
    std::unordered_set<std::string> unchanged;
    absl::StatusOr<CopySnapshot> observed =
        ObserveCopy(copy, snapshot, &unchanged);
    EXPECT_TRUE(observed.ok()) << observed.status();
    if (observed.ok()) snapshot = *std::move(observed);
    return unchanged;
  }

  SyncStats SyncKnown() {
    SyncOptions known;
    known.copy_known = true;
    return Sync(known);
  }

  SyncStats Sync(const SyncOptions& options = SyncOptions()) {
    SyncStats stats;
    absl::StatusOr<CopySnapshot> next =
        SyncCopy(project, copy, snapshot, rules.get(), options, &stats);
    EXPECT_TRUE(next.ok()) << next.status();
    if (next.ok()) snapshot = *std::move(next);
    return stats;
  }
};

// A command's writes: a changed file, an added one, a deletion, a build
// output (ignored) and a write to git's own files.
void WriteAsACommand(const Fixture& f, const std::string& added) {
  Write(f.copy + "/src/a.c", "changed by a command\n");
  Write(f.copy + "/" + added, "added by a command\n");
  ASSERT_EQ(::unlink((f.copy + "/README").c_str()), 0);
  Write(f.copy + "/build/out.o", "object\n");
  Write(f.copy + "/.git/HEAD", "ref: refs/heads/evil\n");
}

// After a refresh: every write but the build output is gone.
void ExpectUndone(const Fixture& f, const std::string& added) {
  EXPECT_EQ(Read(f.copy + "/src/a.c"), "a\n");
  EXPECT_FALSE(Exists(f.copy + "/" + added));
  EXPECT_EQ(Read(f.copy + "/README"), "readme\n");
  EXPECT_EQ(Read(f.copy + "/build/out.o"), "object\n");  // ignored: stays
  EXPECT_EQ(Read(f.copy + "/.git/HEAD"), Read(f.project + "/.git/HEAD"));
}

TEST(CopySyncTest, AFreshCopyIsKnownWithoutReadingOrCopying) {
  Fixture f("fresh");
  struct stat p, c;
  ASSERT_EQ(::lstat((f.project + "/src/a.c").c_str(), &p), 0);
  ASSERT_EQ(::lstat((f.copy + "/src/a.c").c_str(), &c), 0);
  EXPECT_TRUE(f.snapshot.KnownSame("src/a.c", &p, c));
  SyncStats again = f.Sync();
  EXPECT_EQ(again.copied, 0u);
  EXPECT_EQ(again.removed, 0u);
}

TEST(CopySyncTest, ACommandsChangesGoAndBuildOutputsStay) {
  Fixture f("refresh");
  WriteAsACommand(f, "new.c");
  SyncStats stats = f.Sync();
  ExpectUndone(f, "new.c");
  EXPECT_GE(stats.copied, 3u);
  // The kept build output is known; the next sync changes nothing.
  SyncStats next = f.Sync();
  EXPECT_EQ(next.copied + next.removed, 0u);
}

TEST(CopySyncTest, APersonsEditsReachTheCopy) {
  Fixture f("person");
  Write(f.project + "/src/b.c", "edited by the person\n");
  Write(f.project + "/src/c.c", "new\n");
  ASSERT_EQ(::unlink((f.project + "/README").c_str()), 0);
  f.Sync();
  EXPECT_EQ(Read(f.copy + "/src/b.c"), "edited by the person\n");
  EXPECT_EQ(Read(f.copy + "/src/c.c"), "new\n");
  EXPECT_FALSE(Exists(f.copy + "/README"));
}

// A change of the same size with the old mtime put back (touch -d) still
// changes ctime, which no process can set: the sync sees it.
TEST(CopySyncTest, AForgedMtimeDoesNotHideAChange) {
  Fixture f("forged");
  std::string path = f.copy + "/src/a.c";
  struct stat before;
  ASSERT_EQ(::lstat(path.c_str(), &before), 0);
  // The write below then gets a newer ctime than the recorded one.
  WaitForClockPast(TimespecNanoseconds(before.st_ctim));
  Write(path, "X\n");  // same size
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  struct stat after;
  ASSERT_EQ(::lstat(path.c_str(), &after), 0);
  ASSERT_EQ(after.st_size, before.st_size);
  ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_FALSE(f.snapshot.CopyUnchanged("src/a.c", after));
  f.Sync();
  EXPECT_EQ(Read(path), "a\n");
}

TEST(CopySyncTest, TheSnapshotSurvivesSaveAndLoad) {
  Fixture f("save");
  ASSERT_TRUE(f.snapshot.Save(f.snapshot_file).ok());
  absl::StatusOr<CopySnapshot> loaded = CopySnapshot::Load(f.snapshot_file);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->size(), f.snapshot.size());
  struct stat c;
  ASSERT_EQ(::lstat((f.copy + "/src/a.c").c_str(), &c), 0);
  EXPECT_TRUE(loaded->CopyUnchanged("src/a.c", c));
  // A damaged file is an error, a missing one an empty snapshot.
  ASSERT_TRUE(WriteFileAtomically(f.snapshot_file, "garbage", 0600).ok());
  EXPECT_FALSE(CopySnapshot::Load(f.snapshot_file).ok());
  ::unlink(f.snapshot_file.c_str());
  absl::StatusOr<CopySnapshot> none = CopySnapshot::Load(f.snapshot_file);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->size(), 0u);
}

TEST(CopySyncTest, TheWalkAfterACommandFindsWhatItWrote) {
  Fixture f("observe");
  std::unordered_set<std::string> none = f.Observe();
  EXPECT_EQ(none.count(""), 1u);
  EXPECT_EQ(none.count("src"), 1u);
  EXPECT_EQ(none.count(".git"), 1u);
  // Same size, old mtime put back: ctime still shows the write.
  std::string path = f.copy + "/src/a.c";
  struct stat before;
  ASSERT_EQ(::lstat(path.c_str(), &before), 0);
  Write(path, "X\n");
  struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  std::unordered_set<std::string> written = f.Observe();
  EXPECT_EQ(written.count(""), 0u);
  EXPECT_EQ(written.count("src"), 0u);
  EXPECT_EQ(written.count(".git"), 1u);
  // A deletion shows in its folder's times.
  f.Sync();
  ASSERT_EQ(f.Observe().count(""), 1u);
  ASSERT_EQ(::unlink((f.copy + "/src/b.c").c_str()), 0);
  std::unordered_set<std::string> deleted = f.Observe();
  EXPECT_EQ(deleted.count("src"), 0u);
  EXPECT_EQ(deleted.count(""), 0u);
}

// The backend's cycle: refresh with the copy's side taken from the walk
// after the last command. It must end as a refresh that walks the copy.
TEST(CopySyncTest, ARefreshFromTheObservedCopyUndoesTheCommand) {
  Fixture f("known");
  f.Observe();
  f.SyncKnown();
  WriteAsACommand(f, "new/deep.c");
  ASSERT_EQ(::chmod((f.copy + "/src").c_str(), 0700), 0);
  f.Observe();
  Write(f.project + "/src/b.c", "edited by the person\n");
  // Not racy (older than the sync's walk): recorded as a pair.
  WaitForClockPast(CtimeNs(f.project + "/src/b.c"));
  SyncStats stats = f.SyncKnown();
  ExpectUndone(f, "new/deep.c");
  EXPECT_FALSE(Exists(f.copy + "/new"));
  EXPECT_EQ(Read(f.copy + "/src/b.c"), "edited by the person\n");
  struct stat folder;
  ASSERT_EQ(::lstat((f.copy + "/src").c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 07777, 0755u);
  EXPECT_GE(stats.copied, 4u);
  // Nothing written since: nothing to do, and every folder is unchanged.
  std::unordered_set<std::string> unchanged = f.Observe();
  EXPECT_EQ(unchanged.count(""), 1u);
  SyncStats next = f.SyncKnown();
  EXPECT_EQ(next.copied, 0u);
  EXPECT_EQ(next.removed, 0u);
  EXPECT_EQ(Read(f.copy + "/build/out.o"), "object\n");
}

// The negative control: trusting a snapshot that did not see the command's
// writes (what the backend's marker file prevents) would keep them.
TEST(CopySyncTest, AKnownCopyWithoutTheWalkAfterTheCommandMissesItsWrites) {
  Fixture f("stale");
  f.Observe();
  f.SyncKnown();
  Write(f.copy + "/src/a.c", "changed by a command\n");
  f.SyncKnown();  // no Observe: the snapshot is from before the command
  EXPECT_EQ(Read(f.copy + "/src/a.c"), "changed by a command\n");
  f.Sync();  // walking the copy finds it
  EXPECT_EQ(Read(f.copy + "/src/a.c"), "a\n");
}

}  // namespace
}  // namespace garuda
