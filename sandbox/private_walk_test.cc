#include "sandbox/private_walk.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "proto/stored_walk.pb.h"
#include "sandbox/stored_walk.h"

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

// --- The walk stored on disk between processes (sandbox/stored_walk.h) ---

int64_t CoarseNowNs() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

int64_t NewestChangeNs(const std::string& folder) {
  WalkRecord record;
  std::vector<std::string> ignored;
  FindPrivateUnder(folder, &ignored, &record);
  int64_t newest = 0;
  for (const auto& [path, st] : record.looked_at) {
    newest = std::max<int64_t>(
        newest, int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec);
  }
  return newest;
}

class StoredWalkTest : public PrivateWalkTest {
 protected:
  void SetUp() override {
    PrivateWalkTest::SetUp();
    if (::geteuid() != 0) {
      GTEST_SKIP() << "storing needs CAP_SYS_ADMIN (a trusted.* attribute)";
    }
    store_ = std::make_unique<StoredWalk>(root_, "store/walks");
    // The fixture was made just now: the walks are taken to begin later, as
    // if it had settled (AWalkOfWhatHadNotSettledIsNotStored tests the rule).
    store_->SetWalkStartForTest(CoarseNowNs() + 2 * kStoredWalkSettleNs);
  }
  std::vector<std::string> FindStored(bool* reused) {
    std::vector<std::string> found;
    *reused = store_->Find(etc_, &found);
    std::sort(found.begin(), found.end());
    return found;
  }
  // Outside tests the settle rule keeps a change in the walk's own clock
  // tick from going unseen; here the change waits for the next tick.
  void WaitPastChanges() {
    int64_t newest = NewestChangeNs(root_);
    while (CoarseNowNs() <= newest) {
      struct timespec step = {0, 200'000};
      ::nanosleep(&step, nullptr);
    }
  }
  // The stored answer read without any check: the negative control.
  std::vector<std::string> StoredAnswer() {
    StoredPrivateWalk stored;
    auto bytes = ReadFileToString(store_->FileFor(etc_));
    if (!bytes.ok() || !stored.ParseFromString(*bytes)) return {};
    return {stored.found().begin(), stored.found().end()};
  }
  // Stores and checks that the next Find reuses it.
  void StoreAndReuse() {
    bool reused = true;
    FindStored(&reused);
    ASSERT_FALSE(reused);
    FindStored(&reused);
    ASSERT_TRUE(reused) << "the stored answer was not reused";
    WaitPastChanges();
  }
  // After a change that makes `path` private: the stored answer (the
  // control) lacks it, the next Find walks again and hides it.
  void ExpectHiddenAtTheNextFind(const std::string& path) {
    EXPECT_FALSE(Has(StoredAnswer(), path));
    bool reused = true;
    EXPECT_TRUE(Has(FindStored(&reused), path));
    EXPECT_FALSE(reused);
  }
  std::unique_ptr<StoredWalk> store_;
};

TEST_F(StoredWalkTest, TheSameAnswerAsTheWalkAndReusedWhileNothingChanged) {
  std::vector<std::string> plain;
  FindPrivateUnder(etc_, &plain);
  std::sort(plain.begin(), plain.end());
  bool reused = true;
  EXPECT_EQ(FindStored(&reused), plain);
  EXPECT_FALSE(reused);
  EXPECT_EQ(FindStored(&reused), plain);
  EXPECT_TRUE(reused);
  EXPECT_TRUE(ReadFileToString(JoinPath(etc_, "sub/public")).ok());
  EXPECT_EQ(FindStored(&reused), plain);
  EXPECT_TRUE(reused);
  struct stat st;
  ASSERT_EQ(::stat(store_->FileFor(etc_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::stat(store_->place().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(StoredWalkTest, ANewSecretIsHiddenAtTheNextFind) {
  StoreAndReuse();
  std::string added = JoinPath(etc_, "sub/deeper/new-secret");
  MakeFile(added, 0600);
  ExpectHiddenAtTheNextFind(added);
}

TEST_F(StoredWalkTest, AFileMadePrivateIsHiddenAtTheNextFind) {
  StoreAndReuse();
  std::string path = JoinPath(etc_, "sub/public");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  ExpectHiddenAtTheNextFind(path);
}

TEST_F(StoredWalkTest, AFileMadePrivateThroughAnotherLinkIsHidden) {
  StoreAndReuse();
  std::string path = JoinPath(etc_, "sub/public");
  std::string other_name = JoinPath(other_, "same-file");
  ASSERT_EQ(::link(path.c_str(), other_name.c_str()), 0);
  ASSERT_EQ(::chmod(other_name.c_str(), 0600), 0);
  ExpectHiddenAtTheNextFind(path);
}

TEST_F(StoredWalkTest, ALinkReplacedByASecretIsHidden) {
  StoreAndReuse();
  std::string link = JoinPath(etc_, "link");
  MakeFile(JoinPath(other_, "x"), 0600);
  ASSERT_EQ(::rename(JoinPath(other_, "x").c_str(), link.c_str()), 0);
  ExpectHiddenAtTheNextFind(link);
}

TEST_F(StoredWalkTest, AFolderSwappedForAnotherIsSeen) {
  StoreAndReuse();
  // A folder with a secret renamed in place of one the walk read: the
  // names under it are the other folder's.
  std::string swapped = JoinPath(other_, "sub");
  ASSERT_TRUE(MakeDirectories(swapped, 0755).ok());
  MakeFile(JoinPath(swapped, "public"), 0600);
  ASSERT_EQ(::rename(JoinPath(etc_, "sub").c_str(), JoinPath(other_, "old").c_str()), 0);
  ASSERT_EQ(::rename(swapped.c_str(), JoinPath(etc_, "sub").c_str()), 0);
  ExpectHiddenAtTheNextFind(JoinPath(etc_, "sub/public"));
}

// A mount changes no change time; it changes the device and inode seen.
TEST_F(StoredWalkTest, AMountOverAFolderIsSeen) {
  StoreAndReuse();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      ::_exit(10);
    }
    std::string sub = JoinPath(etc_, "sub");
    if (::mount("tmpfs", sub.c_str(), "tmpfs", 0, "mode=0755") != 0) {
      ::_exit(11);
    }
    std::string secret = JoinPath(sub, "mounted-secret");
    int fd = ::open(secret.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) ::_exit(12);
    ::close(fd);
    if (Has(StoredAnswer(), secret)) ::_exit(13);  // the control
    std::vector<std::string> found;
    bool reused = store_->Find(etc_, &found);
    ::_exit(!reused && Has(found, secret) ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A walk that crossed a mount is used for its run but not stored: what is
// mounted may be another kind of file system. The control: the same
// folder without the mount is stored (TheSameAnswer... above).
TEST_F(StoredWalkTest, AWalkAcrossAMountIsNotStored) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      ::_exit(10);
    }
    if (::mount("tmpfs", JoinPath(etc_, "sub").c_str(), "tmpfs", 0,
                "mode=0755") != 0) {
      ::_exit(11);
    }
    std::vector<std::string> found;
    if (store_->Find(etc_, &found) || store_->Find(etc_, &found)) ::_exit(12);
    if (!Has(found, JoinPath(etc_, "shadow"))) ::_exit(13);
    ::_exit(::access(store_->FileFor(etc_).c_str(), F_OK) != 0 ? 0 : 14);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The settle rule: a walk of what changed within kStoredWalkSettleNs of its
// start is not stored. Control: the same folder, taken to be older, is.
TEST_F(StoredWalkTest, AWalkOfWhatHadNotSettledIsNotStored) {
  StoredWalk fresh(root_, "fresh");
  std::vector<std::string> found;
  EXPECT_FALSE(fresh.Find(etc_, &found));
  EXPECT_FALSE(fresh.Find(etc_, &found));
  EXPECT_NE(::access(fresh.FileFor(etc_).c_str(), F_OK), 0);
  bool reused = true;
  FindStored(&reused);
  EXPECT_EQ(::access(store_->FileFor(etc_).c_str(), F_OK), 0);
  FindStored(&reused);
  EXPECT_TRUE(reused);
}

// Whoever may write the store's folder cannot make it hide less: an answer
// with the secret taken out, written over the stored one, is not used. The
// control: with its digest set in the attribute (as only a process with
// CAP_SYS_ADMIN in the host's namespace can), it would be.
TEST_F(StoredWalkTest, AnAnswerChangedWithoutTheAttributeIsNotUsed) {
  StoreAndReuse();
  const std::string file = store_->FileFor(etc_);
  StoredPrivateWalk forged;
  ASSERT_TRUE(forged.ParseFromString(*ReadFileToString(file)));
  forged.clear_found();
  std::string bytes = forged.SerializeAsString();
  {  // Over the stored file: same inode, its attribute left as it was.
    int fd = ::open(file.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(WriteAll(fd, bytes).ok());
    ::close(fd);
  }
  bool reused = true;
  EXPECT_TRUE(Has(FindStored(&reused), JoinPath(etc_, "shadow")));
  EXPECT_FALSE(reused);
  // A new file in its place, without the attribute.
  ASSERT_TRUE(WriteFileAtomically(file, bytes, 0600).ok());
  EXPECT_TRUE(Has(FindStored(&reused), JoinPath(etc_, "shadow")));
  EXPECT_FALSE(reused);
  // The control.
  ASSERT_TRUE(WriteFileAtomically(file, bytes, 0600).ok());
  Sha256Digest digest = Sha256().Update(bytes).Finish();
  ASSERT_EQ(::setxattr(file.c_str(), kStoredWalkDigestAttribute, digest.data(),
                       digest.size(), 0),
            0);
  EXPECT_FALSE(Has(FindStored(&reused), JoinPath(etc_, "shadow")));
  EXPECT_TRUE(reused);
}

// What the attribute rests on: a process in a user namespace of its own
// (as every sandboxed command is), root there and mapped to root outside,
// can neither set nor read a trusted.* attribute. The control: the test
// itself, root in the host's namespace, can.
TEST_F(StoredWalkTest, AProcessInAUserNamespaceCannotSetTheAttribute) {
  StoreAndReuse();
  const std::string file = store_->FileFor(etc_);
  char digest[32] = {};
  ASSERT_EQ(::getxattr(file.c_str(), kStoredWalkDigestAttribute, digest,
                       sizeof digest),
            32);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWUSER) != 0) ::_exit(10);
    int fd = ::open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0 0 1", 5) != 5) ::_exit(11);
    ::close(fd);
    if (::getxattr(file.c_str(), kStoredWalkDigestAttribute, digest,
                   sizeof digest) >= 0) {
      ::_exit(12);
    }
    bool refused = ::setxattr(file.c_str(), kStoredWalkDigestAttribute,
                              "forged", 6, 0) != 0 &&
                   errno == EPERM;
    ::_exit(refused ? 0 : 13);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(::setxattr(file.c_str(), kStoredWalkDigestAttribute, digest,
                       sizeof digest, 0),
            0);  // the control
}

TEST_F(StoredWalkTest, AtMostSixteenAnswersAreKept) {
  for (int i = 0; i < kStoredWalksKept + 4; ++i) {
    std::string folder = JoinPath(other_, "f" + std::to_string(i));
    ASSERT_TRUE(MakeDirectories(folder, 0755).ok());
    std::vector<std::string> found;
    store_->Find(folder, &found);
    EXPECT_EQ(::access(store_->FileFor(folder).c_str(), F_OK), 0) << i;
  }
  int kept = 0;
  for (const auto& entry : std::filesystem::directory_iterator(store_->place())) {
    kept += entry.path().extension() == ".walk";
  }
  EXPECT_EQ(kept, kStoredWalksKept);
}

// A writer killed between its file and the rename leaves a ".new" file;
// the next store removes it once it is over a minute old, never a fresh
// one (another writer's, still being written).
TEST_F(StoredWalkTest, WhatAKilledWriterLeftIsRemoved) {
  ASSERT_TRUE(MakeDirectories(store_->place(), 0700).ok());
  const std::string old_one = JoinPath(store_->place(), ".x.walk.1.1.0.new");
  const std::string fresh = JoinPath(store_->place(), ".y.walk.2.2.0.new");
  ASSERT_TRUE(WriteFileAtomically(old_one, "half", 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(fresh, "half", 0600).ok());
  struct timespec times[2] = {{::time(nullptr) - 120, 0},
                              {::time(nullptr) - 120, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, old_one.c_str(), times, 0), 0);
  bool reused = true;
  FindStored(&reused);
  EXPECT_EQ(::access(store_->FileFor(etc_).c_str(), F_OK), 0);
  EXPECT_NE(::access(old_one.c_str(), F_OK), 0);
  EXPECT_EQ(::access(fresh.c_str(), F_OK), 0);
}

// Without a place (a stager that is not root): every Find walks.
TEST_F(PrivateWalkTest, WithoutAPlaceEveryFindWalks) {
  StoredWalk none("", "");
  std::vector<std::string> found;
  EXPECT_FALSE(none.Find(etc_, &found));
  EXPECT_FALSE(none.Find(etc_, &found));
  EXPECT_TRUE(Has(found, JoinPath(etc_, "shadow")));
  EXPECT_EQ(none.place(), "");
}

}  // namespace
}  // namespace garuda
