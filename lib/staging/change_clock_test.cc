#include "lib/staging/change_clock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

bool AtOrAfter(const struct timespec& c, const struct timespec& line) {
  return c.tv_sec > line.tv_sec ||
         (c.tv_sec == line.tv_sec && c.tv_nsec >= line.tv_nsec);
}

// A person's edit: the file is written, looked at (as git, an editor or
// the stager's own walk do), and written again.
struct stat EditAndStat(const std::string& path) {
  for (const char* text : {"one", "two"}) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                    0600);
    EXPECT_GE(fd, 0);
    EXPECT_GT(::write(fd, text, 3), 0);
    ::close(fd);
    struct stat st;
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
  }
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0);
  return st;
}

// How many of `tries` edits made just before `line()` count as made at or
// after it.
int EditsCountedAsDuring(const std::function<struct timespec()>& line,
                         int tries) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/edited");
  int during = 0;
  for (int i = 0; i < tries; ++i) {
    struct stat before = EditAndStat(path);
    if (AtOrAfter(before.st_ctim, line())) ++during;
  }
  return during;
}

TEST(CommandStartLineTest, AnEditJustBeforeTheLineIsBeforeIt) {
  EXPECT_EQ(EditsCountedAsDuring(CommandStartLine, 200), 0);
}

// Negative control: the coarse clock as the line (what the stager took
// before) counts such edits as made during the command: fine-grained file
// times run ahead of it, and coarse ones share its tick.
TEST(CommandStartLineTest, TheCoarseClockCountsSomeAsDuring) {
  auto coarse = [] {
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    return now;
  };
  EXPECT_GT(EditsCountedAsDuring(coarse, 200), 0);
}

TEST(CommandStartLineTest, AnEditAfterTheLineIsAtOrAfterIt) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/after");
  for (int i = 0; i < 200; ++i) {
    struct timespec line = CommandStartLine();
    struct stat after = EditAndStat(path);
    ASSERT_TRUE(AtOrAfter(after.st_ctim, line)) << "try " << i;
  }
}

}  // namespace
}  // namespace garuda
