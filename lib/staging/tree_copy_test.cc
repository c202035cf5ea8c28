#include "lib/staging/tree_copy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

TEST(TreeCopy, CopiesFilesModesLinksAndFolders) {
  std::string base = JoinPath(std::getenv("TEST_TMPDIR"), "copy");
  RemoveTree(base).IgnoreError();
  std::string from = JoinPath(base, "from");
  ASSERT_TRUE(MakeDirectories(JoinPath(from, "a/b"), 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(from, "a/b/x.sh"), "echo", 0755).ok());
  ASSERT_TRUE(WriteFileAtomically(JoinPath(from, "y"), "why", 0640).ok());
  ASSERT_EQ(::symlink("a/b/x.sh", JoinPath(from, "l").c_str()), 0);
  ASSERT_EQ(::mkfifo(JoinPath(from, "fifo").c_str(), 0600), 0);

  CopyStats stats;
  std::string to = JoinPath(base, "to");
  ASSERT_TRUE(CopyTree(from, to, &stats).ok());
  EXPECT_EQ(stats.reflinked + stats.copied, 2u);
  EXPECT_EQ(stats.skipped_special, 1u);
  EXPECT_EQ(*ReadFileToString(JoinPath(to, "a/b/x.sh")), "echo");
  struct stat st;
  ASSERT_EQ(::stat(JoinPath(to, "a/b/x.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(::stat(JoinPath(to, "y").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  char link[64];
  ssize_t n = ::readlink(JoinPath(to, "l").c_str(), link, sizeof link);
  EXPECT_EQ(std::string(link, n > 0 ? n : 0), "a/b/x.sh");

  auto size = MeasureTree(from, 100, 1 << 20);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(size->files, 6u);  // a, a/b, a/b/x.sh, y, l, fifo
  EXPECT_EQ(size->bytes, 7u);
  // A limit stops the walk early, past the limit.
  auto limited = MeasureTree(from, 1, 1 << 20);
  ASSERT_TRUE(limited.ok());
  EXPECT_GT(limited->files, 1u);
}

}  // namespace
}  // namespace garuda
