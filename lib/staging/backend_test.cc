// The copy backend's start: the copy and its first snapshot, made in one
// walk.
#include "lib/staging/backend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "lib/staging/copy_observe.h"
#include "lib/staging/copy_sync.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

using testing::NewTempDir;
using testing::Snapshot;
using testing::Symlink;
using testing::Write;

// Every path beneath `root` ("" is the root) with its lstat result.
void Walk(const std::string& root, const std::string& relative,
          std::map<std::string, struct stat>* out) {
  struct stat st;
  ASSERT_EQ(::lstat(JoinPath(root, relative).c_str(), &st), 0);
  (*out)[relative] = st;
  if (!S_ISDIR(st.st_mode)) return;
  std::string path = JoinPath(root, relative);
  absl::StatusOr<UniqueFd> fd = OpenFile(path, O_RDONLY | O_DIRECTORY);
  ASSERT_TRUE(fd.ok()) << fd.status();
  absl::StatusOr<std::vector<std::string>> names = FolderNames(fd->get(), path);
  ASSERT_TRUE(names.ok()) << names.status();
  for (const std::string& name : *names) {
    Walk(root, relative.empty() ? name : absl::StrCat(relative, "/", name),
         out);
  }
}

struct CopyStart {
  std::string project, folder;
  std::unique_ptr<StagingBackend> backend;

  explicit CopyStart(const std::string& label) {
    std::string base = NewTempDir(label);
    project = JoinPath(base, "project");
    folder = JoinPath(base, "session");
    Write(JoinPath(project, "README"), "readme\n");
    Write(JoinPath(project, "src/a.c"), "a\n");
    Write(JoinPath(project, "src/tool.sh"), "echo\n", 0755);
    Symlink("src/a.c", JoinPath(project, "link"));
    for (int i = 0; i < 1200; ++i) {  // enough for the copy's workers
      Write(JoinPath(project, absl::StrCat("many/", i % 3, "/", i)),
            absl::StrCat(i));
    }
    // The project's paths must be older than the copy's start to be
    // recorded as pairs (the racy rule): wait for the clock to pass them.
    struct stat st;
    EXPECT_EQ(::lstat(JoinPath(project, "many/2/1199").c_str(), &st), 0);
    WaitForClockPast(TimespecNanoseconds(st.st_ctim));
    EXPECT_EQ(::mkdir(folder.c_str(), 0700), 0);
    backend = MakeStagingBackend("copy", project, folder);
  }
};

TEST(CopyBackendStart, TheFirstSnapshotPairsEveryFileAndLinkOfTheCopy) {
  CopyStart start("first-snapshot");
  ASSERT_TRUE(start.backend->Create().ok());
  std::string copy = JoinPath(start.folder, "copy");
  EXPECT_EQ(Snapshot(copy), Snapshot(start.project));
  absl::StatusOr<CopySnapshot> snapshot =
      CopySnapshot::Load(JoinPath(start.folder, "copy-snapshot"));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  std::map<std::string, struct stat> project_paths, copy_paths;
  Walk(start.project, "", &project_paths);
  Walk(copy, "", &copy_paths);
  EXPECT_EQ(snapshot->size(), copy_paths.size());
  for (const auto& [relative, st] : copy_paths) {
    // The copy's side is what an lstat sees now (a later write shows).
    EXPECT_TRUE(snapshot->CopyUnchanged(relative, st)) << relative;
    if (S_ISDIR(st.st_mode)) continue;
    // Each file and link is known equal to its project side: the first
    // refresh reads nothing.
    EXPECT_TRUE(snapshot->KnownSame(relative, &project_paths[relative], st))
        << relative;
  }
}

TEST(CopyBackendStart, ACommandsWriteAfterTheStartIsListed) {
  CopyStart start("write-after-start");
  ASSERT_TRUE(start.backend->Create().ok());
  BuildOptions options;
  options.project = start.project;
  absl::StatusOr<ChangeSet> none = start.backend->List(options);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->NoChanges());
  // Negative control: a write in the copy (same size) is a change.
  std::string copy = JoinPath(start.folder, "copy");
  Write(JoinPath(copy, "many/1/700"), "007");
  absl::StatusOr<ChangeSet> one = start.backend->List(options);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->changes.size(), 1u);
  EXPECT_NE(testing::FindEntry(*one, "many/1/700"), nullptr);
}

}  // namespace
}  // namespace garuda
