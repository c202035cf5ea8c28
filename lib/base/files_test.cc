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

TEST(RegularFileTest, ReadsARegularFileAndFollowsLinksOnlyWhenAsked) {
  std::string dir = TempDir();
  std::string path = JoinPath(dir, "settings.json");
  ASSERT_TRUE(WriteFileAtomically(path, "{}", 0600).ok());
  EXPECT_EQ(ReadRegularFile(path).value_or("?"), "{}");
  std::string link = JoinPath(dir, "link.json");
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  absl::StatusOr<std::string> refused = ReadRegularFile(link);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find(link + " is a symbolic link"),
            absl::string_view::npos)
      << refused.status();
  // Control: the same link, followed where the caller allows links.
  RegularFileOptions follow;
  follow.follow_links = true;
  EXPECT_EQ(ReadRegularFile(link, follow).value_or("?"), "{}");
}

TEST(RegularFileTest, AFifoIsRefusedWithoutBlocking) {
  std::string dir = TempDir();
  std::string fifo = JoinPath(dir, "policy.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // No writer ever comes: a blocking open or read would never return.
  absl::StatusOr<std::string> read = ReadRegularFile(fifo);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(fifo + " is a FIFO (named pipe), "
                                                "not a regular file"),
            absl::string_view::npos)
      << read.status();
  // Also through ReadFileToString (links followed) and for a writer's open.
  EXPECT_FALSE(ReadFileToString(fifo).ok());
  EXPECT_FALSE(OpenRegularFile(fifo, {}, O_RDWR | O_APPEND | O_CREAT, 0600).ok());
  // Control: it is a working FIFO, which a plain reader would wait on.
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  int writer = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, "x", 1), 1);
  char c = 0;
  EXPECT_EQ(::read(reader, &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(reader);
  ::close(writer);
}

TEST(RegularFileTest, DevZeroIsRefusedLinkedOrNot) {
  std::string dir = TempDir();
  std::string link = JoinPath(dir, "checkpoint.json");
  ASSERT_EQ(::symlink("/dev/zero", link.c_str()), 0);
  absl::StatusOr<std::string> read = ReadRegularFile(link);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("symbolic link"),
            absl::string_view::npos);
  RegularFileOptions follow;
  follow.follow_links = true;
  read = ReadRegularFile(link, follow);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("is a character device"),
            absl::string_view::npos)
      << read.status();
  EXPECT_FALSE(ReadFileToString("/dev/zero").ok());
  // Control: /dev/zero has no end; a plain read loop would fill memory.
  int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char buffer[4096];
  for (int i = 0; i < 256; ++i) ASSERT_EQ(::read(fd, buffer, 4096), 4096);
  ::close(fd);
}

TEST(RegularFileTest, ReadsUpToTheCapAndNoFurther) {
  std::string dir = TempDir();
  std::string path = JoinPath(dir, "journal.jsonl");
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100, 'a'), 0600).ok());
  RegularFileOptions options;
  options.max_bytes = 100;
  EXPECT_EQ(ReadRegularFile(path, options).value_or("").size(), 100u);
  options.max_bytes = 99;
  absl::StatusOr<std::string> read = ReadRegularFile(path, options);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(read.status().message().find(path + " is larger than the 99-byte"),
            absl::string_view::npos)
      << read.status();
}

}  // namespace
}  // namespace garuda
