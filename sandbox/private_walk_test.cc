#include "sandbox/private_walk.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace {

bool Has(const std::vector<std::string>& paths, const std::string& path) {
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

void MakeFile(const std::string& path, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, "secret", 6), 6);
  ::close(fd);
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

class PrivateWalkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "pwXXXXXX");
    root_ = ::mkdtemp(templ.data());
    etc_ = JoinPath(root_, "etc");
    other_ = JoinPath(root_, "other");
    ASSERT_TRUE(MakeDirectories(JoinPath(etc_, "sub/deeper"), 0755).ok());
    ASSERT_TRUE(MakeDirectories(other_, 0755).ok());
    MakeFile(JoinPath(etc_, "public"), 0644);
    MakeFile(JoinPath(etc_, "sub/public"), 0644);
    MakeFile(JoinPath(etc_, "shadow"), 0600);
    ASSERT_EQ(::symlink("shadow", JoinPath(etc_, "link").c_str()), 0);
  }
  std::vector<std::string> Find(PrivateWalk& walk) {
    std::vector<std::string> found;
    walk.Find(etc_, &found);
    std::sort(found.begin(), found.end());
    return found;
  }
  std::string root_, etc_, other_;
};

TEST_F(PrivateWalkTest, TheSameAnswerAsTheWalkAndReusedWhileNothingChanged) {
  PrivateWalk walk;
  std::vector<std::string> plain;
  FindPrivateUnder(etc_, &plain);
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(plain, std::vector<std::string>{JoinPath(etc_, "shadow")});
  EXPECT_EQ(Find(walk), plain);
  EXPECT_EQ(Find(walk), plain);
  EXPECT_EQ(Find(walk), plain);
  EXPECT_EQ(walk.walks(), 1);
  // Reading the files changes nothing that matters: still reused.
  EXPECT_TRUE(ReadFileToString(JoinPath(etc_, "sub/public")).ok());
  EXPECT_EQ(Find(walk), plain);
  EXPECT_EQ(walk.walks(), 1);
}

// The stored answer never outlives a change: each kind of change that
// makes a path private shows at the next Find. Negative control: the
// answer stored before the change, served without the check, misses it.
TEST_F(PrivateWalkTest, ANewSecretIsHiddenAtTheNextFind) {
  PrivateWalk walk;
  Find(walk);
  std::string added = JoinPath(etc_, "sub/deeper/new-secret");
  MakeFile(added, 0600);
  EXPECT_FALSE(Has(walk.StoredForTest(etc_), added));  // the control
  EXPECT_TRUE(Has(Find(walk), added));
  EXPECT_EQ(walk.walks(), 2);
}

TEST_F(PrivateWalkTest, AFileMadePrivateIsHiddenAtTheNextFind) {
  PrivateWalk walk;
  Find(walk);
  std::string path = JoinPath(etc_, "sub/public");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_FALSE(Has(walk.StoredForTest(etc_), path));
  EXPECT_TRUE(Has(Find(walk), path));
}

TEST_F(PrivateWalkTest, AFileMadePrivateThroughAnotherLinkIsHidden) {
  PrivateWalk walk;
  Find(walk);
  std::string path = JoinPath(etc_, "sub/public");
  std::string other_name = JoinPath(other_, "same-file");
  // The link is made after the walk: no watch of a folder under etc sees
  // the chmod through it.
  ASSERT_EQ(::link(path.c_str(), other_name.c_str()), 0);
  ASSERT_EQ(::chmod(other_name.c_str(), 0600), 0);
  EXPECT_FALSE(Has(walk.StoredForTest(etc_), path));
  EXPECT_TRUE(Has(Find(walk), path));
}

TEST_F(PrivateWalkTest, ALinkReplacedByASecretIsHidden) {
  PrivateWalk walk;
  Find(walk);
  std::string link = JoinPath(etc_, "link");
  // A rename over the link: the name that was skipped is now a file.
  MakeFile(JoinPath(other_, "x"), 0600);
  ASSERT_EQ(::rename(JoinPath(other_, "x").c_str(), link.c_str()), 0);
  EXPECT_FALSE(Has(walk.StoredForTest(etc_), link));
  EXPECT_TRUE(Has(Find(walk), link));
}

// A walker that may not read a hidden file (a stager in its own user
// namespace, without the host's capabilities) still reuses its answer: a
// hidden entry needs no watch. Negative control: the secret is hidden.
TEST_F(PrivateWalkTest, AWalkerThatCannotReadTheSecretsStillReuses) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to give a file away";
  std::string theirs = JoinPath(etc_, "sub/theirs");
  MakeFile(theirs, 0600);
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWUSER) != 0) ::_exit(10);
    if (::access(theirs.c_str(), R_OK) == 0) ::_exit(11);  // still root?
    PrivateWalk walk;
    std::vector<std::string> found;
    walk.Find(etc_, &found);
    if (!Has(found, theirs)) ::_exit(12);
    walk.Find(etc_, &found);
    ::_exit(walk.walks() == 1 ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A mount over a folder under etc raises no inotify event; the mount table
// is compared instead. In a mount namespace of a child's own (root only).
TEST_F(PrivateWalkTest, AMountOverAFolderIsSeen) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root for a mount namespace";
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      ::_exit(10);
    }
    PrivateWalk walk;
    std::vector<std::string> first;
    walk.Find(etc_, &first);
    std::string sub = JoinPath(etc_, "sub");
    if (::mount("tmpfs", sub.c_str(), "tmpfs", 0, "mode=0755") != 0) {
      ::_exit(11);
    }
    int fd = ::open(JoinPath(sub, "mounted-secret").c_str(),
                    O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) ::_exit(12);
    ::close(fd);
    // The control: the stored answer does not have it.
    if (Has(walk.StoredForTest(etc_), JoinPath(sub, "mounted-secret"))) {
      ::_exit(13);
    }
    std::vector<std::string> second;
    walk.Find(etc_, &second);
    ::_exit(Has(second, JoinPath(sub, "mounted-secret")) ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace garuda
