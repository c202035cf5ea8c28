#include "lib/base/files.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "gtest/gtest.h"

namespace garuda {
namespace {

std::string TempDir() {
  std::string templ = JoinPath(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp", "filesXXXXXX");
  return ::mkdtemp(templ.data());
}

TEST(FilesTest, AtomicWriteReplacesContentAndSetsMode) {
  std::string dir = TempDir();
  std::string path = JoinPath(dir, "f.json");
  ASSERT_TRUE(WriteFileAtomically(path, "one", 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two", 0600).ok());
  EXPECT_EQ(*ReadFileToString(path), "two");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(FilesTest, MissingFileNamesThePath) {
  auto content = ReadFileToString("/nonexistent/garuda/file");
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(content.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(content.status().message().find("/nonexistent/garuda/file"),
            absl::string_view::npos);
}

TEST(FilesTest, ReadExactTellsEndOfFileFromTruncation) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  UniqueFd a(fds[0]), b(fds[1]);
  ASSERT_TRUE(WriteAll(b.get(), "abc").ok());
  b.Reset();
  char buffer[8];
  EXPECT_EQ(ReadExact(a.get(), buffer, 8).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadExact(a.get(), buffer, 1).code(),
            absl::StatusCode::kOutOfRange);
}

TEST(FilesTest, MakeDirectoriesCreatesParents) {
  std::string dir = TempDir();
  std::string deep = JoinPath(dir, "a/b/c");
  ASSERT_TRUE(MakeDirectories(deep, 0700).ok());
  struct stat st;
  ASSERT_EQ(::stat(deep.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_TRUE(WriteFileAtomically(JoinPath(dir, "file"), "x", 0600).ok());
  EXPECT_FALSE(MakeDirectories(JoinPath(dir, "file"), 0700).ok());
}

TEST(FilesTest, PathHelpers) {
  EXPECT_EQ(Dirname("a/b/c"), "a/b");
  EXPECT_EQ(Dirname("c"), ".");
  EXPECT_EQ(Dirname("/c"), "/");
  EXPECT_EQ(Basename("a/b/c"), "c");
  EXPECT_EQ(JoinPath("a/", "/b"), "a/b");
}

}  // namespace
}  // namespace garuda
