#include "lib/staging/tree_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

// A tree of folders, files (one 0600, one 0755, one setgid), a link and a
// fifo under TEST_TMPDIR/<name>/from.
std::string MakeTree(const std::string& name) {
  std::string base = JoinPath(std::getenv("TEST_TMPDIR"), name);
  RemoveTree(base).IgnoreError();
  std::string from = JoinPath(base, "from");
  EXPECT_TRUE(MakeDirectories(JoinPath(from, "a/b"), 0755).ok());
  EXPECT_TRUE(
      WriteFileAtomically(JoinPath(from, "a/b/x.sh"), "echo", 0755).ok());
  EXPECT_TRUE(WriteFileAtomically(JoinPath(from, "y"), "why", 0600).ok());
  EXPECT_TRUE(WriteFileAtomically(JoinPath(from, "a/g"), "gee", 0600).ok());
  EXPECT_EQ(::chmod(JoinPath(from, "a/g").c_str(), 02751), 0);
  EXPECT_EQ(::chmod(JoinPath(from, "a/b").c_str(), 0750), 0);
  EXPECT_EQ(::symlink("a/b/x.sh", JoinPath(from, "l").c_str()), 0);
  EXPECT_EQ(::mkfifo(JoinPath(from, "fifo").c_str(), 0600), 0);
  struct timespec old[2] = {{1000000000, 5}, {1000000000, 123456789}};
  EXPECT_EQ(::utimensat(AT_FDCWD, JoinPath(from, "y").c_str(), old, 0), 0);
  EXPECT_EQ(::utimensat(AT_FDCWD, JoinPath(from, "a/b").c_str(), old, 0), 0);
  return from;
}

TEST(TreeCopy, CopiesFilesModesLinksAndFolders) {
  std::string from = MakeTree("copy");
  CopyStats stats;
  std::string to = JoinPath(Dirname(from), "to");
  ASSERT_TRUE(CopyTree(from, to, &stats).ok());
  EXPECT_EQ(stats.reflinked + stats.copied, 3u);
  EXPECT_EQ(stats.skipped_special, 1u);
  EXPECT_EQ(*ReadFileToString(JoinPath(to, "a/b/x.sh")), "echo");
  struct stat st;
  ASSERT_EQ(::stat(JoinPath(to, "a/b/x.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(::stat(JoinPath(to, "y").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  char link[64];
  ssize_t n = ::readlink(JoinPath(to, "l").c_str(), link, sizeof link);
  EXPECT_EQ(std::string(link, n > 0 ? n : 0), "a/b/x.sh");
  // A single file and a link keep their names.
  ASSERT_TRUE(CopyTree(JoinPath(from, "y"), JoinPath(to, "a/y"), &stats).ok());
  EXPECT_EQ(*ReadFileToString(JoinPath(to, "a/y")), "why");
  ASSERT_TRUE(CopyTree(JoinPath(from, "l"), JoinPath(to, "a/l"), &stats).ok());
  n = ::readlink(JoinPath(to, "a/l").c_str(), link, sizeof link);
  EXPECT_EQ(std::string(link, n > 0 ? n : 0), "a/b/x.sh");
}

TEST(TreeCopy, ProjectCopyKeepsModesAndTimesAndListsEveryPath) {
  std::string from = MakeTree("project");
  std::string to = JoinPath(Dirname(from), "to");
  CopyStats stats;
  std::vector<CopiedPath> paths;
  CopyRefusal refused;
  ASSERT_TRUE(CopyProjectTree(from, to, CopyLimits{100, 1 << 20}, &stats,
                              &paths, &refused)
                  .ok());
  EXPECT_EQ(refused, CopyRefusal::kNone);
  EXPECT_EQ(stats.paths, 7u);  // a, a/b, a/b/x.sh, a/g, y, l, fifo
  EXPECT_EQ(stats.bytes, 10u);
  EXPECT_EQ(stats.reflinked + stats.copied, 3u);
  EXPECT_EQ(stats.skipped_special, 1u);
  // Every path but the fifo, and the root.
  std::map<std::string, const CopiedPath*> by_path;
  for (const CopiedPath& path : paths) by_path[path.relative] = &path;
  EXPECT_EQ(by_path.size(), 7u);
  EXPECT_EQ(by_path.count("fifo"), 0u);
  for (const auto& [relative, path] : by_path) {
    struct stat source, copy;
    ASSERT_EQ(::lstat(JoinPath(from, relative).c_str(), &source), 0);
    ASSERT_EQ(::lstat(JoinPath(to, relative).c_str(), &copy), 0);
    // What the copy reports is what an lstat sees now.
    EXPECT_EQ(path->copy.st_ino, copy.st_ino) << relative;
    EXPECT_EQ(path->copy.st_ctim.tv_nsec, copy.st_ctim.tv_nsec) << relative;
    EXPECT_EQ(path->copy.st_mode, copy.st_mode) << relative;
    EXPECT_EQ(path->source.st_ino, source.st_ino) << relative;
    EXPECT_EQ(copy.st_mode, source.st_mode) << relative;
    if (!S_ISDIR(copy.st_mode)) {
      EXPECT_TRUE(path->source_steady) << relative;
    }
    if (!relative.empty() && !S_ISLNK(copy.st_mode)) {
      EXPECT_EQ(copy.st_mtim.tv_sec, source.st_mtim.tv_sec) << relative;
      EXPECT_EQ(copy.st_mtim.tv_nsec, source.st_mtim.tv_nsec) << relative;
    }
  }
  EXPECT_EQ(by_path["a/g"]->copy.st_mode & 07777, 02751u);
  EXPECT_EQ(*ReadFileToString(JoinPath(to, "a/g")), "gee");
}

TEST(TreeCopy, ManyFilesAreCopiedByWorkersExactly) {
  std::string base = JoinPath(std::getenv("TEST_TMPDIR"), "many");
  RemoveTree(base).IgnoreError();
  std::string from = JoinPath(base, "from");
  for (int d = 0; d < 7; ++d) {
    std::string folder = JoinPath(from, absl::StrCat("d", d));
    ASSERT_TRUE(MakeDirectories(folder, 0755).ok());
    for (int f = 0; f < 300; ++f) {
      ASSERT_TRUE(WriteFileAtomically(JoinPath(folder, absl::StrCat(f)),
                                      absl::StrCat(d, "-", f, "\n"),
                                      f % 2 == 0 ? 0644 : 0700)
                      .ok());
    }
  }
  std::string to = JoinPath(base, "to");
  CopyStats stats;
  std::vector<CopiedPath> paths;
  CopyRefusal refused;
  ASSERT_TRUE(
      CopyProjectTree(from, to, CopyLimits(), &stats, &paths, &refused).ok());
  EXPECT_EQ(stats.reflinked + stats.copied, 2100u);
  EXPECT_EQ(paths.size(), 2100u + 7 + 1);
  for (int d = 0; d < 7; ++d) {
    for (int f = 0; f < 300; f += 37) {
      std::string relative = absl::StrCat("d", d, "/", f);
      EXPECT_EQ(*ReadFileToString(JoinPath(to, relative)),
                absl::StrCat(d, "-", f, "\n"));
      struct stat st;
      ASSERT_EQ(::stat(JoinPath(to, relative).c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 0777, f % 2 == 0 ? 0644u : 0700u);
    }
  }
}

TEST(TreeCopy, PastTheFileLimitNothingIsCopiedAndNothingStays) {
  std::string from = MakeTree("files-limit");
  std::string to = JoinPath(Dirname(from), "to");
  CopyStats stats;
  CopyRefusal refused;
  absl::Status copied =
      CopyProjectTree(from, to, CopyLimits{6, 0}, &stats, nullptr, &refused);
  EXPECT_TRUE(absl::IsFailedPrecondition(copied)) << copied;
  EXPECT_EQ(refused, CopyRefusal::kFiles);
  EXPECT_EQ(stats.reflinked + stats.copied, 0u);
  struct stat st;
  EXPECT_NE(::lstat(to.c_str(), &st), 0);
  // Negative control: at the limit the copy is made.
  ASSERT_TRUE(
      CopyProjectTree(from, to, CopyLimits{7, 0}, &stats, nullptr, &refused)
          .ok());
  EXPECT_EQ(refused, CopyRefusal::kNone);
}

TEST(TreeCopy, PastTheByteLimitOnlyAReflinkCopyIsMade) {
  std::string from = MakeTree("bytes-limit");
  std::string to = JoinPath(Dirname(from), "to");
  bool reflink = ReflinkWorks(JoinPath(from, "y"), Dirname(to));
  CopyStats stats;
  CopyRefusal refused;
  absl::Status copied =
      CopyProjectTree(from, to, CopyLimits{0, 9}, &stats, nullptr, &refused);
  struct stat st;
  if (reflink) {
    EXPECT_TRUE(copied.ok()) << copied;
  } else {
    EXPECT_TRUE(absl::IsFailedPrecondition(copied)) << copied;
    EXPECT_EQ(refused, CopyRefusal::kBytes);
    EXPECT_EQ(stats.reflinked + stats.copied, 0u);
    EXPECT_NE(::lstat(to.c_str(), &st), 0);
  }
  // Negative control: at the limit the copy is made.
  RemoveTree(to).IgnoreError();
  ASSERT_TRUE(
      CopyProjectTree(from, to, CopyLimits{0, 10}, &stats, nullptr, &refused)
          .ok());
  EXPECT_EQ(::lstat(JoinPath(to, "a/b/x.sh").c_str(), &st), 0);
}

}  // namespace
}  // namespace garuda
