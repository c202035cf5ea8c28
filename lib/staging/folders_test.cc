#include "lib/staging/folders.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/home.h"

namespace garuda {
namespace {

std::string TempFolder(const char* name) {
  std::string path = JoinPath(std::getenv("TEST_TMPDIR"), name);
  RemoveTree(path).IgnoreError();
  EXPECT_TRUE(MakeDirectories(path, 0700).ok());
  return path;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

TEST(Folders, SessionNames) {
  EXPECT_TRUE(CheckSessionName("work-1.a_b").ok());
  EXPECT_FALSE(CheckSessionName("").ok());
  EXPECT_FALSE(CheckSessionName("../x").ok());
  EXPECT_FALSE(CheckSessionName(".hidden").ok());
  EXPECT_FALSE(CheckSessionName("a/b").ok());
  EXPECT_FALSE(CheckSessionName(std::string(129, 'a')).ok());
}

TEST(Folders, OneShotFolderIsPrivateAndNamedByHashPidRandom) {
  std::string root = TempFolder("root1");
  auto folder = OpenStagingFolder(root, "/some/project", "");
  ASSERT_TRUE(folder.ok()) << folder.status();
  struct stat st;
  ASSERT_EQ(::stat(folder->path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string name = Basename(folder->path);
  EXPECT_EQ(name.rfind(ProjectHash("/some/project") + "-" +
                           std::to_string(::getpid()) + "-",
                       0),
            0u)
      << name;
  EXPECT_FALSE(folder->named);
}

// A folder whose process ended is removed at the next start; a folder
// held by a live process is not (negative control), nor a named session,
// nor another project's.
TEST(Folders, EndedFoldersAreRemovedLiveOnesStay) {
  std::string root = TempFolder("root2");
  std::string ended;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    auto folder = OpenStagingFolder(root, "/p", "");
    std::string path = folder.ok() ? folder->path : "";
    (void)!::write(fds[1], path.data(), path.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  char buffer[4096];
  ssize_t n = ::read(fds[0], buffer, sizeof buffer);
  ::close(fds[0]);
  ASSERT_GT(n, 0);
  ended.assign(buffer, n);
  int status;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(Exists(ended));

  auto live = OpenStagingFolder(root, "/p", "");
  ASSERT_TRUE(live.ok());
  auto named = OpenStagingFolder(root, "/p", "keep");
  ASSERT_TRUE(named.ok());
  named->lock.Reset();  // a named session between calls holds no lock
  auto other = OpenStagingFolder(root, "/other", "");
  ASSERT_TRUE(other.ok());

  ASSERT_TRUE(RemoveEndedFolders(root, "/p").ok());
  EXPECT_FALSE(Exists(ended));
  EXPECT_TRUE(Exists(live->path));
  EXPECT_TRUE(Exists(named->path));
  EXPECT_TRUE(Exists(other->path));
}

TEST(Folders, RemoveTreeOpensUpModeZeroFolders) {
  std::string root = TempFolder("root3");
  std::string inner = JoinPath(root, "work/work");
  ASSERT_TRUE(MakeDirectories(inner, 0700).ok());
  ASSERT_TRUE(WriteFileAtomically(JoinPath(inner, "f"), "x", 0600).ok());
  ASSERT_EQ(::symlink("/etc/passwd", JoinPath(root, "link").c_str()), 0);
  ASSERT_EQ(::chmod(inner.c_str(), 0), 0);
  ASSERT_TRUE(RemoveTree(root).ok());
  EXPECT_FALSE(Exists(root));
  EXPECT_TRUE(Exists("/etc/passwd"));
}

TEST(Folders, RemoveTreeOfManyFoldersSharedByWorkers) {
  std::string root = TempFolder("root4");
  std::string copy = JoinPath(root, "copy");
  // Enough folders for the worker processes, some mode 000, and a link to
  // a folder outside that must not be followed.
  std::string outside = TempFolder("outside4");
  ASSERT_TRUE(WriteFileAtomically(JoinPath(outside, "keep"), "k", 0600).ok());
  for (int d = 0; d < 40; ++d) {
    std::string folder = JoinPath(copy, absl::StrCat("d", d, "/sub"));
    ASSERT_TRUE(MakeDirectories(folder, 0755).ok());
    for (int f = 0; f < 20; ++f) {
      ASSERT_TRUE(
          WriteFileAtomically(JoinPath(folder, absl::StrCat(f)), "x", 0600)
              .ok());
    }
    if (d % 7 == 0) ASSERT_EQ(::chmod(folder.c_str(), 0), 0);
    ASSERT_EQ(::symlink(outside.c_str(),
                        JoinPath(copy, absl::StrCat("d", d, "/out")).c_str()),
              0);
  }
  ASSERT_TRUE(RemoveTree(root).ok());
  EXPECT_FALSE(Exists(root));
  EXPECT_TRUE(Exists(JoinPath(outside, "keep")));
}

}  // namespace
}  // namespace garuda
