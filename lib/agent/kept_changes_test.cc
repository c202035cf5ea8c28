#include "lib/agent/kept_changes.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/ipc/sealed_memfd.h"

namespace garuda {
namespace agent {
namespace {

std::string TempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base ? base : "/tmp", "/kept.XXXXXX");
  EXPECT_NE(::mkdtemp(dir.data()), nullptr);
  return dir;
}

UniqueFd Sealed(const std::string& bytes) {
  auto fd = ipc::SealedMemfd("list",
                             [&](int memfd) { return WriteAll(memfd, bytes); });
  EXPECT_TRUE(fd.ok()) << fd.status();
  return fd.ok() ? *std::move(fd) : UniqueFd();
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.insert(name);
  }
  ::closedir(d);
  return names;
}

TEST(KeptChangesTest, KeepsEachListWholeUnderTheNextNumber) {
  std::string session = TempDir();
  UniqueFd first = Sealed("first list bytes");
  // The reader's offset is anywhere: the whole memfd is kept.
  ASSERT_EQ(::lseek(first.get(), 5, SEEK_SET), 5);
  auto one = KeepChangeSet(session, first.get());
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, session + "/staged/1.changeset");
  EXPECT_EQ(*ReadFileToString(*one), "first list bytes");
  struct stat st;
  ASSERT_EQ(::stat(one->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((session + "/staged").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  UniqueFd second = Sealed("second");
  auto two = KeepChangeSet(session, second.get());
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two, session + "/staged/2.changeset");
  EXPECT_EQ(*ReadFileToString(*one), "first list bytes");  // not replaced
  EXPECT_EQ(Names(session + "/staged"),
            std::set<std::string>({"1.changeset", "2.changeset"}));
}

// A full disk (here the file size limit, which fails the write the same
// way) leaves nothing behind; the control is the same list kept without
// the limit.
TEST(KeptChangesTest, AFailedWriteLeavesNothing) {
  std::string session = TempDir();
  std::string big(1 << 20, 'x');
  UniqueFd list = Sealed(big);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    auto kept = KeepChangeSet(session, list.get());
    ::_exit(kept.ok() ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_TRUE(Names(session + "/staged").empty())
      << *Names(session + "/staged").begin();
  auto kept = KeepChangeSet(session, list.get());
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(ReadFileToString(*kept)->size(), big.size());
}

TEST(KeptChangesTest, TheLineSaysHowToReviewIt) {
  std::string line =
      KeptLine("/h/.garuda/sessions/s1/staged/1.changeset", "/src/my app");
  EXPECT_TRUE(absl::StrContains(line, "The changes were not applied"));
  EXPECT_TRUE(
      absl::StrContains(line,
                        "garuda-applier apply --ask --project '/src/my app' < "
                        "/h/.garuda/sessions/s1/staged/1.changeset"))
      << line;
}

}  // namespace
}  // namespace agent
}  // namespace garuda
